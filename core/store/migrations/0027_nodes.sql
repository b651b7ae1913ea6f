-- Companion nodes (core/surfaces/nodes/, docs/nodes.md): machines that connect
-- out to the hub, prove an ed25519 identity, are paired by an operator and run
-- the commands of their catalog as agents' tools.

-- Enrollment tokens: shown once, kept as their SHA-256; a node presents one
-- only until it is paired.
CREATE TABLE node_enrollments (
  id          text PRIMARY KEY,
  project_id  text NOT NULL REFERENCES projects(id),
  name        text,
  token_hash  bytea NOT NULL UNIQUE,
  max_uses    integer NOT NULL CHECK (max_uses >= 1),
  uses        integer NOT NULL DEFAULT 0,
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX node_enrollments_project ON node_enrollments (project_id, id);

-- One row per identity (the id is derived from the key). `catalog` is what it
-- advertised last; `approved_descriptors` the descriptor hashes the operator
-- approved, by command, which is what makes a command usable: a changed catalog
-- leaves the unchanged approved commands usable and the node degraded.
CREATE TABLE nodes (
  id                    text PRIMARY KEY,
  project_id            text NOT NULL REFERENCES projects(id),
  public_key            text NOT NULL UNIQUE,
  enrollment_id         text,
  display_name          text,
  platform              text NOT NULL,
  architecture          text NOT NULL,
  client_version        text NOT NULL,
  protocol_version      integer NOT NULL,
  catalog               jsonb NOT NULL,
  catalog_hash          text NOT NULL,
  allowed_commands      text[] NOT NULL DEFAULT '{}',
  approved_catalog_hash text,
  approved_descriptors  jsonb NOT NULL DEFAULT '{}',
  approved_at           timestamptz,
  revoked_at            timestamptz,
  revocation_reason     text,
  connected_at          timestamptz,
  last_seen_at          timestamptz,
  disconnect_reason     text,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX nodes_project ON nodes (project_id, id);
CREATE INDEX nodes_pending ON nodes (project_id) WHERE approved_at IS NULL AND revoked_at IS NULL;

-- Aliases the operator gave at approval; unique in the project.
CREATE TABLE node_aliases (
  project_id  text NOT NULL,
  alias       text NOT NULL,
  node_id     text NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  position    integer NOT NULL DEFAULT 0,  -- the operator's order: the first names the node's tools
  PRIMARY KEY (project_id, alias)
);
CREATE INDEX node_aliases_node ON node_aliases (node_id);

-- The invocation ledger: one row per tool call to a node, its plan committed
-- (as the call's checkpoint) before anything is sent.
--   prepared → dispatched → accepted → running → succeeded | failed | canceled | unknown
--   prepared → expired (never sent) | canceled (never sent)
CREATE TABLE node_invocations (
  id                     text PRIMARY KEY,
  project_id             text NOT NULL,
  node_id                text NOT NULL REFERENCES nodes(id),
  response_id            text NOT NULL,
  call_id                text NOT NULL,
  idempotency_key        text NOT NULL,
  command                text NOT NULL,
  plan                   jsonb NOT NULL,
  plan_hash              text NOT NULL,
  state                  text NOT NULL CHECK (state IN ('prepared', 'dispatched', 'accepted', 'running', 'succeeded', 'failed', 'canceled', 'unknown', 'expired')),
  dispatch_holder        text,
  expires_at             timestamptz NOT NULL,
  dispatched_at          timestamptz,
  accepted_at            timestamptz,
  completed_at           timestamptz,
  exit_code              integer,
  result                 jsonb,
  failure_code           text,
  failure_message        text,
  cancel_requested_at    timestamptz,
  termination_confirmed  boolean,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (response_id, call_id),
  UNIQUE (node_id, idempotency_key)
);
CREATE INDEX node_invocations_open ON node_invocations (node_id, created_at) WHERE state IN ('prepared', 'dispatched', 'accepted', 'running');
CREATE INDEX node_invocations_by_node ON node_invocations (node_id, id);
