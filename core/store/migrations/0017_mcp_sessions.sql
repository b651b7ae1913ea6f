-- MCP sessions live in the store, not in a process: a host that opened its
-- session on one Palai process may send its next request to any other.
CREATE TABLE mcp_sessions (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id),
  key_id text NOT NULL,
  protocol_version text NOT NULL,
  client_info jsonb NOT NULL,
  client_capabilities jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz
);
CREATE INDEX mcp_sessions_idle ON mcp_sessions (last_used_at) WHERE ended_at IS NULL;

-- Which response a tools/call of a session started, so that a cancellation, a
-- resumed stream or a poll arriving at another process finds it.
CREATE TABLE mcp_session_calls (
  session_id text NOT NULL REFERENCES mcp_sessions (id) ON DELETE CASCADE,
  request_key text NOT NULL,
  response_id text NOT NULL,
  progress_token jsonb,
  task boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, request_key)
);
CREATE INDEX mcp_session_calls_response ON mcp_session_calls (session_id, response_id);
