-- Queue consumers: a project's SQS queues and Kafka topics whose messages are
-- agent jobs. Processes with the consumers role run every consumer that is not
-- paused. Static credentials live in the secret store; the row holds a reference.
CREATE TABLE queue_consumers (
  id                     text PRIMARY KEY,
  project_id             text NOT NULL REFERENCES projects(id),
  name                   text NOT NULL,
  kind                   text NOT NULL CHECK (kind IN ('sqs', 'kafka')),
  -- The SqsSource or KafkaSource, as created.
  source                 jsonb NOT NULL,
  reply                  jsonb,
  dead_letter            jsonb,
  agent                  text,
  max_in_flight          integer NOT NULL CHECK (max_in_flight > 0),
  paused                 boolean NOT NULL DEFAULT false,
  credentials_kind       text CHECK (credentials_kind IN ('sqs', 'sasl')),
  credentials_secret_id  text,
  credentials_last4      text,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);

-- One row per admitted job: which consumer took it, under which key, and where
-- its result goes. Written in the admission's transaction, with the outbox
-- subscription that sends the result.
CREATE TABLE queue_jobs (
  response_id      text PRIMARY KEY REFERENCES responses(id) ON DELETE CASCADE,
  project_id       text NOT NULL,
  consumer_id      text NOT NULL,
  idempotency_key  text,
  -- The broker's own identity of the message that brought the job.
  message_id       text NOT NULL,
  -- The job's reply_to, else the consumer's reply destination; null: no result.
  reply_to         text,
  created_at       timestamptz NOT NULL DEFAULT now()
);

-- External conversation keys (a queue job's session_key, a Slack thread) and
-- the Palai session each maps to, per source.
CREATE TABLE session_keys (
  project_id  text NOT NULL,
  source      text NOT NULL,
  key         text NOT NULL,
  session_id  text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, source, key)
);
