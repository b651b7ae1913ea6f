// Admitting a Slack message: it becomes a response exactly once. The response,
// its thread's session (created by the thread's first message), the thread row
// and the reply row the streamer projects commit in one transaction, keyed in
// the inbox by the message's identity (bot, channel, ts), so Slack's retries,
// duplicate deliveries and the two events a mention in a thread arrives as find
// the first response and run nothing. Only then is Slack's request acknowledged.
// A message in a thread whose latest response waits for input answers it instead.
import { PalaiError } from '../../errors/palai-error.js';
import type { Inbox, InboxIdentity, IdempotencyClaim } from '../../idempotency/inbox-port.js';
import { answerWaiting } from '../../responses/actions.js';
import { admitWithin, type AdmissionCommand } from '../../responses/admission.js';
import type { Db, Queryable } from '../../store/db.js';
import { EVENT_DEDUPE_HOURS, SLACK_INBOX_SOURCE, SLACK_SESSION_KEYS, type SlackAdmission, type SlackBotConfig, type SlackMessage } from './slack-bots-port.js';

/** The session key of a thread: per bot, so two bots in one thread keep their own conversations. */
export const threadKey = (botId: string, message: Pick<SlackMessage, 'team' | 'channel' | 'threadTs'>) =>
  `${botId}:${message.team}:${message.channel}:${message.threadTs}`;

/** The thread's latest response, when it waits for an answer to a question. */
async function waitingForInput(tx: Queryable, botId: string, message: SlackMessage): Promise<string | null> {
  const { rows } = await tx.query<{ id: string; status: string }>(
    `SELECT r.id, r.status FROM slack_replies sr JOIN responses r ON r.id = sr.response_id
     WHERE sr.bot_id = $1 AND sr.team = $2 AND sr.channel = $3 AND sr.thread_ts = $4
     ORDER BY sr.created_at DESC LIMIT 1 FOR UPDATE OF r`,
    [botId, message.team, message.channel, message.threadTs],
  );
  return rows[0]?.status === 'waiting_for_input' ? rows[0].id : null;
}

/** True when the bot has answered in this thread: only then does a message without a mention concern it. */
export async function isKnownThread(db: Queryable, botId: string, message: Pick<SlackMessage, 'team' | 'channel' | 'threadTs'>): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM slack_threads WHERE bot_id = $1 AND team = $2 AND channel = $3 AND thread_ts = $4', [
    botId,
    message.team,
    message.channel,
    message.threadTs,
  ]);
  return rows.length > 0;
}

/** What a message asks the kernel to admit: a run of the bot's agent in its thread's session (made by the thread's first message). */
function messageCommand(bot: SlackBotConfig, message: SlackMessage): AdmissionCommand {
  return {
    agent: bot.agentId,
    input: [{ role: 'user', content: message.text }],
    session: { kind: 'key', source: SLACK_SESSION_KEYS, key: threadKey(bot.id, message) },
    metadata: { slack_team: message.team, slack_channel: message.channel, slack_thread_ts: message.threadTs, slack_user: message.user },
  };
}

async function admitNew(tx: Queryable, bot: SlackBotConfig, message: SlackMessage, claim: IdempotencyClaim): Promise<SlackAdmission> {
  const row = await admitWithin(tx, bot.projectId, messageCommand(bot, message), claim);
  const sessionId = row.session_id!;
  await tx.query(
    `INSERT INTO slack_threads (bot_id, project_id, team, channel, thread_ts, session_id) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (bot_id, team, channel, thread_ts) DO NOTHING`,
    [bot.id, bot.projectId, message.team, message.channel, message.threadTs, sessionId],
  );
  await tx.query(
    'INSERT INTO slack_replies (response_id, project_id, bot_id, team, channel, thread_ts, event_id, user_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
    [row.id, bot.projectId, bot.id, message.team, message.channel, message.threadTs, message.eventId, message.user],
  );
  return { kind: 'admitted', responseId: row.id, sessionId };
}

export async function admitSlackMessage(db: Db, inbox: Inbox, bot: SlackBotConfig, message: SlackMessage): Promise<SlackAdmission> {
  const identity: InboxIdentity = {
    projectId: bot.projectId,
    source: SLACK_INBOX_SOURCE,
    key: `${bot.id}:${message.channel}:${message.ts}`.slice(0, 255),
    operation: 'slackMessage',
    fingerprint: inbox.fingerprint('slackMessage', { bot: bot.id }, { team: message.team, channel: message.channel, ts: message.ts }),
    retentionHours: EVENT_DEDUPE_HOURS,
  };
  if (!message.text) throw new PalaiError('invalid-request', 'The Slack message has no text to answer.');
  return inbox.once(
    identity,
    (claim) =>
      db.transaction(async (tx): Promise<SlackAdmission> => {
        const waiting = await waitingForInput(tx, bot.id, message);
        if (!waiting) return admitNew(tx, bot, message, claim);
        await answerWaiting(tx, bot.projectId, waiting, [{ kind: 'input', text: message.text, pointer: '/text' }], claim);
        return { kind: 'answered', responseId: waiting };
      }),
    async (record) => ({ kind: 'duplicate', responseId: record.resourceId ?? '' }),
  );
}
