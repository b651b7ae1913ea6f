-- Slack answers streamed from the journal (bots/slack/streamer.ts). A reply is
-- projected into its thread by one process at a time (a lease), and its
-- progress is saved after every Slack call, so a restart continues the same
-- message instead of posting the answer again.
ALTER TABLE slack_replies
  ADD COLUMN user_id             text,
  ADD COLUMN progress            jsonb NOT NULL DEFAULT '{"segment":0,"ts":null,"sent":0,"digest":null,"mode":null}',
  ADD COLUMN projected_sequence  integer NOT NULL DEFAULT -1,
  ADD COLUMN lease_owner         text,
  ADD COLUMN lease_until         timestamptz,
  ADD COLUMN finished_at         timestamptz,
  ADD COLUMN last_error          text;

-- Replies still to project: the streamers' claim scans only these.
CREATE INDEX slack_replies_open ON slack_replies (created_at) WHERE finished_at IS NULL;

-- Approval prompts posted in threads: the buttons name the response and the
-- call; the row says where the message is and who decided, so the message is
-- updated once, with the decision.
CREATE TABLE slack_prompts (
  response_id  text NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
  call_id      text NOT NULL,
  project_id   text NOT NULL,
  bot_id       text NOT NULL,
  channel      text NOT NULL,
  message_ts   text NOT NULL,
  summary      text NOT NULL,
  decision     text,
  decided_by   text,
  decided_at   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (response_id, call_id)
);

-- Socket Mode: one connection per bot across the cluster, held by a lease.
ALTER TABLE slack_bots
  ADD COLUMN socket_owner        text,
  ADD COLUMN socket_lease_until  timestamptz;
