// The answer a `slack_reply` delivery posts, built from the journal event that
// announced the status, so every attempt of one delivery posts the same text.
// What reaches the thread is the answer or one short line: never a stack trace,
// never more of an error than its message.
import { readEvents } from '../journal/journal.js';
import type { ResponseState } from '../journal/journal-port.js';
import type { StatusAnnouncement } from '../outbox/outbox-port.js';
import { outputText } from '../responses/items.js';
import type { Queryable } from '../store/db.js';
import type { SlackReply } from './slack-bots-port.js';

/** Slack's limit for one message's text is 40,000 characters; stay well inside it. */
const MAX_TEXT = 3900;
const MAX_ERROR = 300;

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The text for the thread, by status: the answer, or why there is none. */
export function replyText(response: ResponseState): string {
  const pending = response.pending_calls[0];
  switch (response.status) {
    case 'completed':
      return cut(outputText(response.output).trim() || '(The agent finished without an answer.)', MAX_TEXT);
    case 'failed':
      return `Sorry, I could not answer: ${cut(response.error?.message ?? 'the run failed', MAX_ERROR)}`;
    case 'canceled':
      return 'The answer was canceled.';
    case 'timed_out':
      return 'Sorry, the answer took too long and was stopped.';
    case 'budget_exceeded':
      return 'Sorry, the answer ran out of its budget and was stopped.';
    case 'waiting_for_approval':
      return `Waiting for approval to run \`${pending?.name ?? 'a tool'}\`. Approving from Slack is not available yet; an approver can decide through Palai's API.`;
    case 'waiting_for_input':
      return cut(pending?.question ?? 'The agent is waiting for an answer.', MAX_TEXT);
    case 'waiting_for_tool':
      return 'Waiting for a client tool\'s output.';
    case 'queued':
    case 'in_progress':
      return '';
    default: {
      const never: never = response.status;
      return never;
    }
  }
}

/** What a delivery posts and where; null when it can never be posted (the response or its event is gone). */
export async function slackReply(db: Queryable, projectId: string, announcement: StatusAnnouncement): Promise<SlackReply | null> {
  const { rows } = await db.query<{ bot_id: string; channel: string; thread_ts: string }>('SELECT bot_id, channel, thread_ts FROM slack_replies WHERE response_id = $1 AND project_id = $2', [
    announcement.response_id,
    projectId,
  ]);
  const target = rows[0];
  if (!target) return null;
  const [entry] = await readEvents(db, announcement.response_id, announcement.sequence - 1, 1);
  if (!entry || entry.sequence !== announcement.sequence || entry.event.type !== 'status') return null;
  const text = replyText(entry.event.response);
  return text ? { botId: target.bot_id, channel: target.channel, threadTs: target.thread_ts, text } : null;
}
