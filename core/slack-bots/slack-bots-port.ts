// The Slack port: what the Slack surface (bots/slack) needs from the kernel to
// serve an agent in Slack threads.
//
// Glossary
//   bot        a project's Slack app installation bound to one agent; its tokens
//              and signing secret are in the secret store, by reference
//   thread     (team, channel, thread_ts): one Palai session (session_keys,
//              source 'slack'), listed per bot in slack_threads
//   admission  a Slack message made a response: the response, its session
//              mapping, its reply row and the outbox subscription that posts the
//              answer commit in one transaction, keyed in the inbox by the
//              event's event_id; only then is Slack's request acknowledged
//   reply      the answer posted in the thread through the outbox (consumer
//              `slack_reply`, target = the bot id) when the response ends or waits

/** The outbox consumer that posts answers in threads. */
export const SLACK_REPLY_CONSUMER = 'slack_reply';

/** Slack's own Web API, when a bot names no other. */
export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';

/** How long an event_id is remembered: Slack retries for minutes, a day is ample. */
export const EVENT_DEDUPE_HOURS = 24;

/** A bot as the surface serving it needs it: its secrets revealed. Never shown to API callers. */
export interface SlackBotConfig {
  id: string;
  projectId: string;
  name: string;
  agentId: string;
  mode: 'http' | 'socket';
  approvers: string[];
  apiUrl: string;
  botToken: string;
  signingSecret: string;
  appToken: string | null;
}

/** A user's message the bot answers: an `app_mention`, or a direct message. */
export interface SlackMessage {
  /** Slack's id of the event delivery: the same on every retry of it. */
  eventId: string;
  team: string;
  channel: string;
  /** The thread's root: the message's own ts when it starts the thread. */
  threadTs: string;
  user: string;
  /** The text, the bot's mention already removed. */
  text: string;
}

/** `admitted`: a new response; `duplicate`: the event was admitted before (Slack retried it). */
export type SlackAdmission = { kind: 'admitted'; responseId: string; sessionId: string } | { kind: 'duplicate'; responseId: string };

/** What to post, and where: built from the journal event the delivery announces. */
export interface SlackReply {
  botId: string;
  channel: string;
  threadTs: string;
  /** Plain text for the thread: the answer, or a short line saying why there is none. */
  text: string;
}
