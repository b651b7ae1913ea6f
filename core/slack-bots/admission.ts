// Admitting a Slack message: it becomes a response exactly once. The response,
// its thread's session (created by the thread's first message), the thread row,
// the reply row and the subscription that posts the answer commit in one
// transaction, keyed in the inbox by the event's event_id, so Slack's retries
// and duplicate deliveries find the first response and run nothing. Only then
// does the surface acknowledge Slack's request.
import type { Inbox, InboxIdentity } from '../idempotency/inbox-port.js';
import { subscribe } from '../outbox/subscriptions.js';
import { admitWithin } from '../responses/admission.js';
import type { ResponseStatus } from '../responses/status.js';
import { sessionForKey } from '../sessions/session-keys.js';
import type { Db } from '../store/db.js';
import { EVENT_DEDUPE_HOURS, SLACK_REPLY_CONSUMER, type SlackAdmission, type SlackBotConfig, type SlackMessage } from './slack-bots-port.js';

/** The statuses an answer is posted on: every end, and every wait for someone. */
export const REPLY_STATUSES: ResponseStatus[] = ['completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded', 'waiting_for_approval', 'waiting_for_input', 'waiting_for_tool'];

/** The session key of a thread: per bot, so two bots in one thread keep their own conversations. */
export const threadKey = (botId: string, message: Pick<SlackMessage, 'team' | 'channel' | 'threadTs'>) => `${botId}:${message.team}:${message.channel}:${message.threadTs}`;

export async function admitSlackMessage(db: Db, inbox: Inbox, bot: SlackBotConfig, message: SlackMessage): Promise<SlackAdmission> {
  const identity: InboxIdentity = {
    projectId: bot.projectId,
    source: 'slack',
    key: `${bot.id}:${message.eventId}`.slice(0, 255),
    operation: 'slackMessage',
    fingerprint: inbox.fingerprint('slackMessage', { bot: bot.id }, { team: message.team, channel: message.channel, thread_ts: message.threadTs, user: message.user, text: message.text }),
    retentionHours: EVENT_DEDUPE_HOURS,
  };
  return inbox.once(
    identity,
    (claim) =>
      db.transaction(async (tx): Promise<SlackAdmission> => {
        const sessionId = await sessionForKey(tx, bot.projectId, 'slack', threadKey(bot.id, message), bot.agentId);
        const metadata = { slack_team: message.team, slack_channel: message.channel, slack_thread_ts: message.threadTs, slack_user: message.user };
        const row = await admitWithin(tx, bot.projectId, { model: bot.agentId, input: message.text, session_id: sessionId, metadata }, claim);
        await tx.query(
          `INSERT INTO slack_threads (bot_id, project_id, team, channel, thread_ts, session_id) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (bot_id, team, channel, thread_ts) DO NOTHING`,
          [bot.id, bot.projectId, message.team, message.channel, message.threadTs, sessionId],
        );
        await tx.query('INSERT INTO slack_replies (response_id, project_id, bot_id, team, channel, thread_ts, event_id) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
          row.id,
          bot.projectId,
          bot.id,
          message.team,
          message.channel,
          message.threadTs,
          message.eventId,
        ]);
        await subscribe(tx, { projectId: bot.projectId, consumer: SLACK_REPLY_CONSUMER, target: bot.id, statuses: REPLY_STATUSES, responseId: row.id });
        return { kind: 'admitted', responseId: row.id, sessionId };
      }),
    async (record) => ({ kind: 'duplicate', responseId: record.resourceId ?? '' }),
  );
}
