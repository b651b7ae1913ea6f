// Writes that move a response between states. Each runs inside the caller's
// transaction and journals what it did, so state and events never disagree.
// A worker writes under its lease token; an API action (answering a waiting
// response, cancelling) locks the row and bumps the token, fencing out any
// worker that might still think it owns the response.
import type { Item, ResponseError, Usage } from '../../generated/schemas.js';
import { PalaiError } from '../errors/palai-error.js';
import { appendEvent, LeaseLostError, type JournalWriter } from '../journal/journal.js';
import { WORK_CHANNEL } from '../journal/wakeups.js';
import { appendSessionItems } from '../sessions/sessions.js';
import type { Queryable } from '../store/db.js';
import type { ToolCallRow } from '../tools/tool-calls.js';
import { requireResponse, responseView, type ResponseRow } from './responses.js';
import { isTerminal, terminalEventType, type TERMINAL_STATUSES } from './status.js';

export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export type WaitingStatus = 'waiting_for_approval' | 'waiting_for_tool' | 'waiting_for_input';

/** Fails the transaction unless the writer still holds the lease (API writers have none to check). */
async function fence(tx: Queryable, writer: JournalWriter): Promise<void> {
  if (writer.leaseToken === null) return;
  const { rowCount } = await tx.query('SELECT 1 FROM responses WHERE id = $1 AND lease_token = $2', [writer.responseId, writer.leaseToken]);
  if (rowCount === 0) throw new LeaseLostError(writer.responseId);
}

/** Appends finished items to the output and journals each as added + done. */
export async function appendOutputItems(tx: Queryable, writer: JournalWriter, items: Item[]): Promise<void> {
  if (items.length === 0) return;
  await fence(tx, writer);
  const { rows } = await tx.query<{ length: number }>(
    `UPDATE responses SET output = output || $2::jsonb WHERE id = $1 RETURNING jsonb_array_length(output) AS length`,
    [writer.responseId, JSON.stringify(items)],
  );
  let index = rows[0].length - items.length;
  for (const item of items) {
    const outputIndex = index++;
    await appendEvent(tx, writer, 'response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress' } });
    await appendEvent(tx, writer, 'response.output_item.done', { output_index: outputIndex, item });
  }
}

/** The waiting status the open calls imply; approval first, since nothing runs before it. */
export function waitingStatusFor(openCalls: Pick<ToolCallRow, 'status'>[]): WaitingStatus | null {
  if (openCalls.some((c) => c.status === 'awaiting_approval')) return 'waiting_for_approval';
  if (openCalls.some((c) => c.status === 'awaiting_output')) return 'waiting_for_tool';
  if (openCalls.some((c) => c.status === 'awaiting_input')) return 'waiting_for_input';
  return null;
}

/**
 * Parks the response: no lease, and `wake_at` set to the earliest approval
 * deadline or the response's own deadline, so a worker looks at it then.
 */
export async function enterWaiting(tx: Queryable, writer: JournalWriter, status: WaitingStatus): Promise<void> {
  await fence(tx, writer);
  await tx.query(
    `UPDATE responses SET status = $2, lease_owner = NULL, lease_expires_at = NULL,
       wake_at = (SELECT min(t) FROM (
         SELECT min(approval_deadline) AS t FROM tool_calls WHERE response_id = $1 AND status = 'awaiting_approval'
         UNION ALL SELECT deadline_at FROM responses WHERE id = $1) AS deadlines)
     WHERE id = $1`,
    [writer.responseId, status],
  );
  const row = await requireResponse(tx, writer.projectId, writer.responseId);
  await appendEvent(tx, writer, `response.${status}`, { response: responseView(row) });
}

/** An API action answered the last thing a waiting response needed: hand it back to the workers. */
export async function resumeWaiting(tx: Queryable, row: ResponseRow): Promise<void> {
  await tx.query(
    `UPDATE responses SET status = 'in_progress', lease_owner = NULL, lease_expires_at = NULL, wake_at = NULL,
       lease_token = lease_token + 1 WHERE id = $1`,
    [row.id],
  );
  const writer: JournalWriter = { projectId: row.project_id, responseId: row.id, leaseToken: null };
  const fresh = await requireResponse(tx, row.project_id, row.id);
  await appendEvent(tx, writer, 'response.in_progress', { response: responseView(fresh) });
  await tx.query('SELECT pg_notify($1, $2)', [WORK_CHANNEL, row.id]);
}

export interface Outcome {
  status: TerminalStatus;
  output: Item[];
  usage: Usage | null;
  error: ResponseError | null;
}

/** Commits the terminal state, the session's new items and the one terminal event together. */
export async function finishResponse(tx: Queryable, writer: JournalWriter, outcome: Outcome): Promise<ResponseRow> {
  const before = await requireResponse(tx, writer.projectId, writer.responseId, true);
  if (writer.leaseToken !== null && before.lease_token !== writer.leaseToken) throw new LeaseLostError(writer.responseId);
  if (isTerminal(before.status)) throw new PalaiError('conflict', `Response ${before.id} is already ${before.status}.`);
  await tx.query(
    `UPDATE responses SET status = $2, output = $3, usage = $4, error = $5, completed_at = now(),
       lease_owner = NULL, lease_expires_at = NULL, wake_at = NULL, lease_token = lease_token + 1
     WHERE id = $1`,
    [writer.responseId, outcome.status, JSON.stringify(outcome.output), outcome.usage && JSON.stringify(outcome.usage), outcome.error && JSON.stringify(outcome.error)],
  );
  // The session gets the response's output once, when it ends; cut-off items stay out of it.
  if (before.session_id) {
    const finished = outcome.output.filter((item) => item.status !== 'incomplete');
    await appendSessionItems(tx, before.project_id, before.session_id, before.id, finished);
  }
  const final = await requireResponse(tx, writer.projectId, writer.responseId);
  await appendEvent(tx, { ...writer, leaseToken: null }, terminalEventType(outcome.status), { response: responseView(final) });
  return final;
}
