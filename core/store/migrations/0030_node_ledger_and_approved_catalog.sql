-- The nodes' sweep purges ended invocations past PALAI_NODE_LEDGER_RETENTION_HOURS
-- (core/surfaces/nodes/invocation-ledger.ts): oldest first, open ones never.
CREATE INDEX node_invocations_ended ON node_invocations (completed_at) WHERE state IN ('succeeded', 'failed', 'canceled', 'unknown', 'expired');

-- The catalog as it was approved, so a node's view can say what its advertised
-- catalog added, dropped or changed since (null for nodes approved before).
ALTER TABLE nodes ADD COLUMN approved_catalog jsonb;

-- What a person approving a call was shown (a node call: the node, command,
-- profile, arguments and the digest of the approved descriptor): the call
-- runs only while what it shows still holds.
ALTER TABLE tool_calls ADD COLUMN approval_display jsonb;

-- Project secrets (POST /v1/secrets): named, for node commands' environments.
ALTER TABLE secrets ADD COLUMN name text;
CREATE UNIQUE INDEX secrets_project_name ON secrets (project_id, name) WHERE name IS NOT NULL;
-- Which project secret each of an invocation's secret environment variables
-- is, to reveal at dispatch (the plan binds them by digest and length only).
ALTER TABLE node_invocations ADD COLUMN secret_refs jsonb;
