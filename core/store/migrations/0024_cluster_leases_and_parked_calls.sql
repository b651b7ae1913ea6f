-- Cluster leases (core/leases/): one holder per key across every process, by a
-- row, not an advisory lock, so they work through a transaction-mode pooler
-- and on the embedded store. `token` grows by one at every take of the key (the
-- fencing token); a released lease keeps its row, and with it the count, so a
-- later take never hands out a token an earlier holder had.
CREATE TABLE cluster_leases (
  key         text PRIMARY KEY,
  holder      text,
  token       integer NOT NULL,
  expires_at  timestamptz NOT NULL,
  taken_at    timestamptz NOT NULL DEFAULT now()
);

-- Parked tool calls (core/tools/parked-calls.ts): a call that waits for an
-- external party holds no worker. `park_deadline` is when the kernel gives it
-- `park_timeout_output`; `park_answer` is what the party answered (kept after
-- the call completes, so a repeat is told apart from a different answer);
-- `park_ended` says which of the two the call's output is.
ALTER TABLE tool_calls
  ADD COLUMN park_deadline        timestamptz,
  ADD COLUMN park_timeout_output  text,
  ADD COLUMN park_answer          text,
  ADD COLUMN park_ended           text;

-- NOT VALID: no scan of every call under the ALTER's exclusive lock (every
-- existing row is NULL, so none can break it); new rows are checked at once.
ALTER TABLE tool_calls ADD CONSTRAINT tool_calls_park_ended_check CHECK (park_ended IN ('answered', 'timed_out')) NOT VALID;
