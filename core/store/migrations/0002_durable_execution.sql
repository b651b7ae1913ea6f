-- Durable execution: tool calls with their own lifecycle, cancellation, limits,
-- wake-ups for waiting responses (approval timeouts, deadlines), idempotency keys.

ALTER TABLE responses
  ADD COLUMN cancel_requested_at timestamptz,
  ADD COLUMN deadline_at         timestamptz,
  ADD COLUMN wake_at             timestamptz,
  ADD COLUMN tool_call_count     integer NOT NULL DEFAULT 0,
  ADD COLUMN repair_attempts     integer NOT NULL DEFAULT 0,
  -- Items the kernel adds to the model's view (an output-repair request), never output.
  ADD COLUMN kernel_items        jsonb NOT NULL DEFAULT '[]';

-- Waiting responses that must be looked at by a time (approval timeout, deadline).
CREATE INDEX responses_wake ON responses (wake_at) WHERE wake_at IS NOT NULL;

CREATE TABLE tool_calls (
  project_id         text NOT NULL REFERENCES projects(id),
  response_id        text NOT NULL REFERENCES responses(id),
  call_id            text NOT NULL,
  item_id            text NOT NULL,
  position           integer NOT NULL,
  name               text NOT NULL,
  kind               text NOT NULL,
  arguments          text NOT NULL,
  risk               text NOT NULL,
  -- awaiting_approval | ready | running | awaiting_output | awaiting_input | completed
  status             text NOT NULL,
  question           text,
  decision           jsonb,
  approval_deadline  timestamptz,
  output             text,
  attempts           integer NOT NULL DEFAULT 0,
  created_at         timestamptz NOT NULL DEFAULT now(),
  completed_at       timestamptz,
  PRIMARY KEY (response_id, call_id)
);

CREATE TABLE idempotency_keys (
  project_id   text NOT NULL REFERENCES projects(id),
  key          text NOT NULL,
  operation    text NOT NULL,
  fingerprint  text NOT NULL,
  resource_id  text,
  status       integer,
  body         jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (project_id, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
