-- Projects, API keys, agents with immutable revisions, sessions with ordered
-- items, responses with their lease columns, and the append-only event journal.

CREATE TABLE projects (
  id          text PRIMARY KEY,
  project_id  text GENERATED ALWAYS AS (id) STORED,  -- every row carries project_id, this one too
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  project_id    text NOT NULL REFERENCES projects(id),
  name          text NOT NULL,
  prefix        text NOT NULL,
  secret_hash   text NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX api_keys_project ON api_keys (project_id, id);

CREATE TABLE agents (
  id                text PRIMARY KEY,
  project_id        text NOT NULL REFERENCES projects(id),
  name              text NOT NULL,
  current_revision  integer NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);
CREATE INDEX agents_project ON agents (project_id, id);

CREATE TABLE agent_revisions (
  id          text PRIMARY KEY,
  project_id  text NOT NULL REFERENCES projects(id),
  agent_id    text NOT NULL REFERENCES agents(id),
  revision    integer NOT NULL,
  spec        json NOT NULL,  -- json, not jsonb: keeps the author's key order (output schemas, scripts)
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (agent_id, revision)
);

CREATE TABLE sessions (
  id          text PRIMARY KEY,
  project_id  text NOT NULL REFERENCES projects(id),
  agent_id    text NOT NULL REFERENCES agents(id),
  metadata    jsonb NOT NULL DEFAULT '{}',
  item_count  integer NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE responses (
  id                    text PRIMARY KEY,
  project_id            text NOT NULL REFERENCES projects(id),
  agent_id              text NOT NULL REFERENCES agents(id),
  agent_revision_id     text NOT NULL REFERENCES agent_revisions(id),
  session_id            text,  -- kept after the session is deleted: the response still says where it ran
  previous_response_id  text REFERENCES responses(id),
  status                text NOT NULL,
  input                 jsonb NOT NULL,
  instructions          text,
  metadata              jsonb NOT NULL DEFAULT '{}',
  background            boolean NOT NULL DEFAULT false,
  output                jsonb NOT NULL DEFAULT '[]',
  usage                 jsonb,
  error                 jsonb,
  next_sequence         integer NOT NULL DEFAULT 0,
  model_calls           integer NOT NULL DEFAULT 0,
  lease_owner           text,
  lease_token           integer NOT NULL DEFAULT 0,
  lease_expires_at      timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  completed_at          timestamptz
);
-- Workers scan for runnable work: queued, or in progress with an expired lease.
CREATE INDEX responses_runnable ON responses (created_at) WHERE status IN ('queued', 'in_progress');
CREATE INDEX responses_project ON responses (project_id, id);

CREATE TABLE session_items (
  id           text PRIMARY KEY,
  project_id   text NOT NULL REFERENCES projects(id),
  session_id   text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  position     integer NOT NULL,
  response_id  text REFERENCES responses(id),
  item         jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (session_id, position)
);

CREATE TABLE response_events (
  project_id   text NOT NULL REFERENCES projects(id),
  response_id  text NOT NULL REFERENCES responses(id),
  sequence     integer NOT NULL,
  type         text NOT NULL,
  data         jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (response_id, sequence)
);
