-- A global, gap-safe order over every response's journal, for project feeds
-- (outbox writers, projections). A serial alone is not safe: a transaction that
-- took a lower position can commit after a reader passed a higher one. So each
-- row also carries its writer's transaction id, and readers take only rows below
-- the snapshot horizon (pg_snapshot_xmin: every older transaction has ended),
-- ordered by (tx_id, position). core/journal/project-feed.ts reads them.

ALTER TABLE response_events
  ADD COLUMN position bigserial,
  ADD COLUMN tx_id    xid8 NOT NULL DEFAULT pg_current_xact_id();

-- Existing rows got positions in storage order; renumber them so that each
-- response's events keep their sequence order (by a running maximum of their
-- times, since a later sequence may come from a transaction that began first).
UPDATE response_events AS e
   SET position = ordered.n
  FROM (SELECT response_id, sequence,
               row_number() OVER (ORDER BY settled_at, response_id, sequence) AS n
          FROM (SELECT response_id, sequence,
                       max(created_at) OVER (PARTITION BY response_id ORDER BY sequence) AS settled_at
                  FROM response_events) AS settled) AS ordered
 WHERE e.response_id = ordered.response_id AND e.sequence = ordered.sequence;

-- A transaction may take its id before an earlier transaction appends the
-- response's previous event (the sequence waits on the response row lock, the
-- transaction id does not). Raising tx_id to the predecessor's keeps a response's
-- events in sequence order in the feed; it stays at least the writer's own id, so
-- the horizon still holds back every row a running transaction could commit.
-- A trigger, not the insert: its query sees the predecessor committed while the
-- insert statement waited for the lock, which the statement's own snapshot does not.
CREATE FUNCTION response_events_tx_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.tx_id := GREATEST(
    pg_current_xact_id(),
    (SELECT tx_id FROM response_events WHERE response_id = NEW.response_id AND sequence = NEW.sequence - 1));
  RETURN NEW;
END
$$;

CREATE TRIGGER response_events_tx_id BEFORE INSERT ON response_events
  FOR EACH ROW EXECUTE FUNCTION response_events_tx_id();

CREATE INDEX response_events_feed ON response_events (project_id, tx_id, position);
