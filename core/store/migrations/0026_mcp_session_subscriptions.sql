-- What an MCP session asked for beyond its calls, in the store so that any
-- process serves it: the log level it set (logging/setLevel; null: no log
-- notifications) and the resources it subscribed to (resources/subscribe).
-- Subscriptions go with their session: on DELETE /mcp (mcp-sessions.ts ends
-- them) and when a stale session is purged (the cascade).
ALTER TABLE mcp_sessions ADD COLUMN log_level text;

CREATE TABLE mcp_session_subscriptions (
  session_id text NOT NULL REFERENCES mcp_sessions (id) ON DELETE CASCADE,
  uri text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, uri)
);
