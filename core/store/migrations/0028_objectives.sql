-- Autonomy (core/surfaces/autonomy/, docs/autonomy.md): objectives an agent
-- works toward, the delegation policies a person approves by hash, the
-- triggers that wake them and a record of every occurrence, admitted or not.

CREATE TABLE objectives (
  id                     text PRIMARY KEY,
  project_id             text NOT NULL REFERENCES projects(id),
  agent_id               text NOT NULL REFERENCES agents(id),
  description            text NOT NULL CHECK (length(btrim(description)) > 0),
  success_criteria       text,
  priority               integer NOT NULL DEFAULT 0,
  review_at              timestamptz,
  -- The session the wakes continue (session_mode objective): named at creation, else the first wake's.
  session_id             text,
  session_mode           text NOT NULL CHECK (session_mode IN ('objective', 'per_wake')),
  overlap                text NOT NULL CHECK (overlap IN ('skip', 'buffer_one')),
  status                 text NOT NULL CHECK (status IN ('active', 'paused', 'blocked', 'completed', 'abandoned')),
  blocked_reason         text,
  metadata               jsonb NOT NULL DEFAULT '{}',
  -- The newest admitted wake: what the overlap gate looks at.
  last_wake_response_id  text,
  -- The one occurrence kept while a wake ran (overlap buffer_one), admitted when it ends.
  buffered_trigger_id    text,
  buffered_due_at        timestamptz,
  completed_evidence     text,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX objectives_project ON objectives (project_id, id);
CREATE INDEX objectives_buffered ON objectives (buffered_due_at) WHERE buffered_due_at IS NOT NULL;

-- Versions of an objective's delegation policy. The hash is of the document's
-- RFC 8785 canonical JSON; at most one version is approved at a time.
CREATE TABLE objective_policies (
  objective_id   text NOT NULL REFERENCES objectives(id) ON DELETE CASCADE,
  version        integer NOT NULL,
  document       jsonb NOT NULL,
  hash           text NOT NULL,
  status         text NOT NULL CHECK (status IN ('draft', 'approved', 'superseded', 'revoked')),
  expires_at     timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  approved_at    timestamptz,
  revoked_at     timestamptz,
  PRIMARY KEY (objective_id, version)
);
-- The same document proposed again is the same draft; once approved, superseded or revoked it may be proposed anew.
CREATE UNIQUE INDEX objective_policies_one_draft_per_hash ON objective_policies (objective_id, hash) WHERE status = 'draft';
CREATE UNIQUE INDEX objective_policies_one_approved ON objective_policies (objective_id) WHERE status = 'approved';

-- What wakes an objective: a cron schedule, the agent's one-shot schedule_wake
-- (keyed by the call that made it, so a retried call makes one), or manual wakes.
CREATE TABLE objective_triggers (
  id                      text PRIMARY KEY,
  objective_id            text NOT NULL REFERENCES objectives(id) ON DELETE CASCADE,
  project_id              text NOT NULL,
  kind                    text NOT NULL CHECK (kind IN ('cron', 'once', 'manual')),
  cron                    text,
  timezone                text,
  end_at                  timestamptz,
  missed_run_policy       text NOT NULL CHECK (missed_run_policy IN ('skip', 'run_once', 'catch_up')),
  catchup_window_seconds  integer NOT NULL,
  max_catch_up            integer NOT NULL CHECK (max_catch_up BETWEEN 1 AND 100),
  status                  text NOT NULL CHECK (status IN ('enabled', 'done')),
  next_due_at             timestamptz,
  last_fired_at           timestamptz,
  skipped_count           bigint NOT NULL DEFAULT 0,
  -- Missed occurrences caught up in a backlog one tick could not take whole: max_catch_up holds across its ticks.
  caught_up               integer NOT NULL DEFAULT 0,
  last_skip_reason        text,
  reason                  text,
  created_by_call         text UNIQUE,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX objective_triggers_objective ON objective_triggers (objective_id, created_at);
CREATE INDEX objective_triggers_due ON objective_triggers (next_due_at) WHERE status = 'enabled';
CREATE UNIQUE INDEX objective_triggers_one_manual ON objective_triggers (objective_id) WHERE kind = 'manual';

-- Every occurrence the scheduler took, once: admitted with its response, or
-- skipped with the reason. The key is what makes a second wake for one
-- occurrence impossible, whichever process or restart tries.
CREATE TABLE objective_wakes (
  trigger_id    text NOT NULL,
  due_at        timestamptz NOT NULL,
  objective_id  text NOT NULL REFERENCES objectives(id) ON DELETE CASCADE,
  outcome       text NOT NULL CHECK (outcome IN ('admitted', 'skipped')),
  reason        text,
  response_id   text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (trigger_id, due_at)
);
CREATE INDEX objective_wakes_newest ON objective_wakes (objective_id, due_at DESC);
-- The newest admitted wakes of an objective: what the overlap gate looks at.
CREATE INDEX objective_wakes_admitted ON objective_wakes (objective_id, due_at DESC) WHERE outcome = 'admitted';
-- Which objective a response is a wake of (never its metadata, which a caller may set).
CREATE UNIQUE INDEX objective_wakes_response ON objective_wakes (response_id) WHERE response_id IS NOT NULL;
