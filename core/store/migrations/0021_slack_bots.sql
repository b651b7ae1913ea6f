-- Slack bots: each serves one agent in Slack threads. The bot token, signing
-- secret and app token live in the secret store; the row holds references.
CREATE TABLE slack_bots (
  id                        text PRIMARY KEY,
  project_id                text NOT NULL REFERENCES projects(id),
  name                      text NOT NULL,
  agent_id                  text NOT NULL,
  mode                      text NOT NULL CHECK (mode IN ('http', 'socket')),
  approvers                 jsonb NOT NULL DEFAULT '[]',
  api_url                   text NOT NULL,
  bot_token_secret_id       text NOT NULL,
  bot_token_last4           text NOT NULL,
  signing_secret_secret_id  text NOT NULL,
  app_token_secret_id       text,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);

-- The threads a bot has answered in, each with its session (the session key
-- itself is in session_keys, source 'slack'). Written by the first admitted
-- message of the thread.
CREATE TABLE slack_threads (
  bot_id      text NOT NULL REFERENCES slack_bots(id) ON DELETE CASCADE,
  project_id  text NOT NULL,
  team        text NOT NULL,
  channel     text NOT NULL,
  thread_ts   text NOT NULL,
  session_id  text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (bot_id, team, channel, thread_ts)
);

-- One row per response a Slack message started: which bot answers it, and
-- where. Written in the admission's transaction, with the outbox subscription
-- that posts the answer.
CREATE TABLE slack_replies (
  response_id  text PRIMARY KEY REFERENCES responses(id) ON DELETE CASCADE,
  project_id   text NOT NULL,
  bot_id       text NOT NULL,
  team         text NOT NULL,
  channel      text NOT NULL,
  thread_ts    text NOT NULL,
  event_id     text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
