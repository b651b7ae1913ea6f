-- Autonomy, part 2 (docs/autonomy.md): the call gate of wakes, the resource
-- grants it checks, the objective's pace, and the action journal.

-- How a call that ran ended, for the action journal: succeeded, failed, or
-- uncertain (it may have acted and was not run again). Null before it ends,
-- and for calls that ended otherwise (a denial, a client's output).
ALTER TABLE tool_calls ADD COLUMN outcome text CHECK (outcome IN ('succeeded', 'failed', 'uncertain'));

-- The objective's own pace (burst_cap, period_limit, period_seconds,
-- minimum_cooldown, base_backoff, max_backoff); {} sets none.
ALTER TABLE objectives ADD COLUMN pace jsonb NOT NULL DEFAULT '{}';
-- Where the objective's notifications go ({webhook_endpoints: [...]}), and
-- the blocked reason last announced (a new one is announced again).
ALTER TABLE objectives ADD COLUMN notify jsonb NOT NULL DEFAULT '{}';
ALTER TABLE objectives ADD COLUMN notified_block text;
-- The notifications pass looks only at objectives that notify.
CREATE INDEX objectives_notifying ON objectives (id) WHERE notify <> '{}';
-- The wake's status last announced (failed, waiting for a person).
ALTER TABLE objective_wakes ADD COLUMN announced text;

-- What a person lets an objective's wakes act on. Revoked grants stay listed.
CREATE TABLE objective_grants (
  id            text PRIMARY KEY,
  objective_id  text NOT NULL REFERENCES objectives(id) ON DELETE CASCADE,
  type          text NOT NULL CHECK (type IN ('filesystem', 'browser', 'mcp', 'command', 'repository', 'cloud', 'document', 'channel', 'generated_process')),
  locator       text NOT NULL,
  access_mode   text NOT NULL CHECK (access_mode IN ('read', 'write', 'execute')),
  constraints   jsonb,
  expires_at    timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz
);
CREATE INDEX objective_grants_objective ON objective_grants (objective_id, created_at);

-- One row per gated call of a wake, keyed like the call (a retried call is the
-- same action), written in the INSERT of the call itself: the verdict commits
-- with the call. The status is derived from the call as it goes
-- (core/surfaces/autonomy/actions.ts); resolved_status is a person's settling
-- of an uncertain one. No foreign key to tool_calls: the journal outlives a
-- deleted response.
CREATE TABLE objective_actions (
  response_id      text NOT NULL,
  call_id          text NOT NULL,
  objective_id     text NOT NULL REFERENCES objectives(id) ON DELETE CASCADE,
  trigger_id       text,
  due_at           timestamptz,
  kind             text NOT NULL,
  tool             text NOT NULL,
  target_type      text,
  target           text,
  class            text NOT NULL,
  policy_hash      text,
  request          jsonb NOT NULL,
  verdict          text NOT NULL CHECK (verdict IN ('allowed', 'refused')),
  rule             text,
  reason           text,
  resolved_status  text CHECK (resolved_status IN ('succeeded', 'failed')),
  evidence         text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  resolved_at      timestamptz,
  -- Watched for an uncertain ending to announce, until it ends (objectives with notifications only).
  watching         boolean NOT NULL DEFAULT false,
  PRIMARY KEY (response_id, call_id)
);
CREATE INDEX objective_actions_objective ON objective_actions (objective_id, created_at DESC);
-- What the pace limits count: allowed actions that are not observe.
CREATE INDEX objective_actions_counted ON objective_actions (objective_id, created_at) WHERE verdict = 'allowed' AND class <> 'observe';
CREATE INDEX objective_actions_watching ON objective_actions (objective_id) WHERE watching;
