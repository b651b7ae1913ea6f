-- The durable outbox. Subscriptions say which response status changes a
-- consumer (webhooks, A2A push, ...) wants announced; deliveries are written in
-- the transaction of the event they announce and handed to their consumer at
-- least once, with retries and backoff.

-- Ids minted in SQL for rows an INSERT … SELECT creates, in the shape of
-- core/ids.ts: prefix, 10 characters of milliseconds, 16 random ones (Crockford
-- base32). Ids minted in one millisecond do not sort among themselves.
CREATE FUNCTION palai_new_id(prefix text) RETURNS text LANGUAGE sql VOLATILE AS $$
  WITH parts AS (
    SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms, uuid_send(gen_random_uuid()) AS noise)
  SELECT prefix || '_'
    || (SELECT string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz', ((ms >> (5 * (9 - i))) & 31)::integer + 1, 1), '' ORDER BY i)
          FROM generate_series(0, 9) AS i)
    || (SELECT string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz', (get_byte(noise, i) & 31) + 1, 1), '' ORDER BY i)
          FROM generate_series(0, 15) AS i)
  FROM parts
$$;

-- response_id and agent_id are filters, not references: a subscription may
-- name a response before it exists (an A2A push config), and the outbox stays
-- usable on its own.
CREATE TABLE outbox_subscriptions (
  id           text PRIMARY KEY,
  project_id   text NOT NULL REFERENCES projects(id),
  consumer     text NOT NULL,
  target       text NOT NULL,
  statuses     text[] NOT NULL CHECK (cardinality(statuses) > 0),
  response_id  text,
  agent_id     text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
-- Announcing looks subscriptions up by project; operators by consumer and target.
CREATE INDEX outbox_subscriptions_project ON outbox_subscriptions (project_id, consumer, target);

-- subscription_id is kept after its subscription is removed: it still says why
-- the delivery was written, and it keeps announcing idempotent.
CREATE TABLE outbox_deliveries (
  id                text PRIMARY KEY,
  project_id        text NOT NULL REFERENCES projects(id),
  consumer          text NOT NULL,
  target            text NOT NULL,
  subscription_id   text,
  response_id       text,
  event_sequence    integer,
  payload           jsonb NOT NULL,
  status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
  -- Attempts started, the one in progress included.
  attempts          integer NOT NULL DEFAULT 0,
  next_attempt_at   timestamptz NOT NULL DEFAULT now(),
  lease_owner       text,
  lease_token       integer NOT NULL DEFAULT 0,
  lease_expires_at  timestamptz,
  last_error        text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  delivered_at      timestamptz,
  dead_at           timestamptz
);
-- Dispatchers scan pending deliveries that are due.
CREATE INDEX outbox_deliveries_due ON outbox_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_deliveries_project ON outbox_deliveries (project_id, id);
-- Housekeeping deletes old delivered ones.
CREATE INDEX outbox_deliveries_delivered ON outbox_deliveries (delivered_at) WHERE status = 'delivered';
-- Announcing one event twice for one subscription writes one delivery.
CREATE UNIQUE INDEX outbox_deliveries_once ON outbox_deliveries (subscription_id, response_id, event_sequence)
  WHERE subscription_id IS NOT NULL;
