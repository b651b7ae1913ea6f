-- Remote A2A agents a project registered: the card fetched when it was
-- registered, and the headers sent with every call, each value kept in the
-- secret store (the row holds only references and last fours).
CREATE TABLE remote_agents (
  id          text PRIMARY KEY,
  project_id  text NOT NULL REFERENCES projects(id),
  name        text NOT NULL,
  card_url    text NOT NULL,
  card        jsonb NOT NULL,
  -- [{ "name": "Authorization", "secret_id": "sec_…", "last4": "…" | null }]
  headers     jsonb NOT NULL DEFAULT '[]',
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);
