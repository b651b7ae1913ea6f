-- Outbound webhooks. An endpoint is a URL, the events it wants and, optionally,
-- the agents whose responses it hears about; it becomes outbox subscriptions
-- (consumer 'webhook', target = the endpoint's id). Its signing secrets live in
-- the secret store; the row holds their references only.
CREATE TABLE webhook_endpoints (
  id                          text PRIMARY KEY,
  project_id                  text NOT NULL REFERENCES projects(id),
  url                         text NOT NULL,
  description                 text,
  events                      text[] NOT NULL CHECK (cardinality(events) > 0),
  -- Agent ids; null: every agent.
  agents                      text[],
  enabled                     boolean NOT NULL DEFAULT true,
  disabled_reason             text,
  disabled_at                 timestamptz,
  secret_id                   text NOT NULL,
  -- The secret before the latest rotation, still signed with until it expires.
  previous_secret_id          text,
  previous_secret_expires_at  timestamptz,
  -- Since when deliveries have failed with no success in between; null: healthy.
  failing_since               timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_project ON webhook_endpoints (project_id, id);

-- Every attempt of a webhook delivery, for operators: what the receiver
-- answered, how long it took, and when the next attempt is due.
CREATE TABLE webhook_attempts (
  id               text PRIMARY KEY,
  project_id       text NOT NULL REFERENCES projects(id),
  endpoint_id      text NOT NULL,
  delivery_id      text NOT NULL,
  attempt          integer NOT NULL,
  status_code      integer,
  latency_ms       integer NOT NULL,
  error            text,
  next_attempt_at  timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- The dispatcher counts a target's attempts in flight when it claims
-- (per-target concurrency), and operators list an endpoint's deliveries.
CREATE INDEX outbox_deliveries_target ON outbox_deliveries (consumer, target, id);
