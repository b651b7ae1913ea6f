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
//   reply      the answer streamed into the thread from the response's journal
//              (bots/slack/streamer.ts): one process at a time holds a reply's
//              lease and saves its progress after every Slack call, so a restart
//              continues the same message
//   prompt     an approval request posted with buttons; only the bot's
//              approvers decide, once
import { declareInboxSource } from '../../idempotency/inbox-sources.js';
import { declareSessionKeySource } from '../../sessions/session-keys.js';

/** Slack's own Web API, when a bot names no other. */
export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';

/** How long an event_id is remembered: Slack retries for minutes, a day is ample. */
export const EVENT_DEDUPE_HOURS = 24;

/** Messages in the inbox, keyed by their identity; and the sessions of threads. */
export const SLACK_INBOX_SOURCE = declareInboxSource('slack', 'event_id');
export const SLACK_SESSION_KEYS = declareSessionKeySource('slack');

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
  /** The message's own ts: with the channel, what identifies it (a mention in a thread arrives as two events). */
  ts: string;
  team: string;
  channel: string;
  /** The thread's root: the message's own ts when it starts the thread. */
  threadTs: string;
  user: string;
  /** The text, the bot's mention already removed. */
  text: string;
}

/**
 * `admitted`: a new response; `answered`: the message answered the thread's response that waited
 * for input, which resumes; `duplicate`: the message was admitted before (Slack retried it).
 */
export type SlackAdmission =
  { kind: 'admitted'; responseId: string; sessionId: string } | { kind: 'answered'; responseId: string } | { kind: 'duplicate'; responseId: string };

/** How far a reply's projection into its thread has got: saved after every Slack call. */
export interface SlackReplyProgress {
  /** Segments of the answer (text, prompts, notices) fully posted. */
  segment: number;
  /** The message the current text segment is being written into, once started. */
  ts: string | null;
  /** Characters of the current text segment already in that message. */
  sent: number;
  /** A digest of those characters: when a retried model call rewrote them, the message is rewritten too. */
  digest: string | null;
  /** `stream`: chat.startStream/appendStream/stopStream; `edit`: chat.postMessage then chat.update. */
  mode: 'stream' | 'edit' | null;
}

/** A reply a streamer holds the lease of. */
export interface SlackReplyJob {
  responseId: string;
  projectId: string;
  botId: string;
  team: string;
  channel: string;
  threadTs: string;
  /** Who wrote the message: Slack's streaming methods address the stream to them. */
  userId: string | null;
  progress: SlackReplyProgress;
  /** The last journal sequence whose effects are all in the thread (-1: none yet). */
  projectedSequence: number;
}

/** What a streamer saves after a Slack call; false back means its lease was lost and it must stop. */
export interface SlackReplySave {
  /** Absent: only the lease is renewed (a heartbeat). */
  progress?: SlackReplyProgress;
  projectedSequence?: number;
  /** Give the lease back (the response waits for someone; nothing is left to post until it moves). */
  release?: boolean;
  /** Nothing more will ever be posted: the response ended and all of it is in the thread. */
  finished?: boolean;
  /** Why the reply was given up (one short line, never a token). */
  error?: string;
  /** Approval prompts about to be posted (no messageTs yet) or posted. */
  prompts?: SlackPrompt[];
}

/** An approval request posted in a thread with Approve and Deny buttons. */
export interface SlackPrompt {
  responseId: string;
  callId: string;
  channel: string;
  /** The posted message; null while the post is on its way (the prompt is recorded before it is posted). */
  messageTs: string | null;
  /** The prompt's text, kept to rewrite the message with the decision. */
  summary: string;
}

/** A click on Approve or Deny. */
export interface SlackDecision {
  responseId: string;
  callId: string;
  decision: 'approve' | 'deny';
  /** The Slack user who clicked. */
  user: string;
}

/**
 * `decided`: the decision was applied and the run resumes; `not_approver`: the user is not one of
 * the bot's approvers; `already`: someone decided before; `stale`: the response no longer waits
 * for this call (decided through the API, expired, canceled) or the prompt is unknown.
 */
export type SlackDecisionOutcome =
  | { kind: 'decided'; prompt: SlackPrompt; decidedAt: Date }
  | { kind: 'already'; prompt: SlackPrompt; decision: string; decidedBy: string; decidedAt: Date }
  | { kind: 'not_approver' }
  | { kind: 'stale'; detail: string };
