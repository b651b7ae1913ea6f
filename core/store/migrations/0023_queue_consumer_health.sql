-- Whether a queue consumer reaches its source, as the processes running it
-- last reported: each writes when its own state changes (it starts failing,
-- it recovers), never on every poll, and any process reads it for the API.
-- A row speaks of one version of the consumer (its updated_at): after a change
-- it is stale, and the consumer shows `starting` until a process reports again.
CREATE TABLE queue_consumer_health (
  consumer_id       text PRIMARY KEY REFERENCES queue_consumers(id) ON DELETE CASCADE,
  consumer_version  timestamptz NOT NULL,
  state             text NOT NULL CHECK (state IN ('running', 'failing')),
  since             timestamptz NOT NULL,
  -- The latest failure to connect or receive: the error's name and message, no credentials.
  last_error        text,
  last_error_at     timestamptz
);
