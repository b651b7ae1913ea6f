-- MCP servers a project registered (Streamable HTTP; stdio servers are the
-- operator's and live in configuration, not here): the URL, the headers sent
-- with every request, each value kept in the secret store (the row holds only
-- references and last fours), and the server's tools as last listed.
CREATE TABLE mcp_servers (
  id               text PRIMARY KEY,
  project_id       text NOT NULL REFERENCES projects(id),
  name             text NOT NULL,
  url              text NOT NULL,
  -- [{ "name": "Authorization", "secret_id": "sec_…", "last4": "…" | null }]
  headers          jsonb NOT NULL DEFAULT '[]',
  -- The server's tools/list answer (name, title, description, inputSchema, outputSchema, annotations), null until listed.
  tools            jsonb,
  tools_listed_at  timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);
