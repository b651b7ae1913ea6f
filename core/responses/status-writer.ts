// The one status writer. Every change of a response's status goes through
// changeStatus, which checks it against the transition table (status.ts) under
// the row lock and the writer's lease, writes it, and journals the `status` event
// that announces it — with the outbox deliveries subscribed to it — in the same
// transaction, so state, journal and deliveries never disagree.
//
// A worker writes under its lease token; an API action (answering a waiting
// response, cancelling) locks the row and bumps the token, fencing out any worker
// that might still think it owns the response. The one other status write is
// a worker's claim (runner/claim.ts), which takes only CLAIMABLE_STATUSES.
import type { Item, ResponseError, Usage } from '../../generated/schemas.js';
import { PalaiError } from '../errors/palai-error.js';
import { appendEvent, type JournalWriter } from '../journal/journal.js';
import { WORK_CHANNEL } from '../journal/wakeups.js';
import { announceStatus } from '../outbox/announce.js';
import { appendSessionItems } from '../sessions/sessions.js';
import type { Queryable } from '../store/db.js';
import type { ToolCallRow } from '../tools/tool-calls.js';
import { lockUnderLease } from './lease.js';
import { requireResponse, responseState, type ResponseRow } from './responses.js';
import { canTransition, isTerminal, type TerminalStatus, type WaitingStatus } from './status.js';

export type { TerminalStatus, WaitingStatus };

export interface Outcome {
  status: TerminalStatus;
  output: Item[];
  usage: Usage | null;
  error: ResponseError | null;
}

/** The change to make: back to the workers, a wait, or the end. */
export type StatusChange = { to: 'in_progress' } | { to: WaitingStatus } | Outcome;

export class IllegalTransition extends Error {
  constructor(responseId: string, from: string, to: string) {
    super(`response ${responseId} may not go from ${from} to ${to}`);
    this.name = 'IllegalTransition';
  }
}

/**
 * Journals the status the response row now has (and announces it to the
 * outbox). Called by changeStatus, and by admission and a claim, which wrote
 * the status themselves.
 */
export async function journalStatus(tx: Queryable, writer: JournalWriter, row: ResponseRow): Promise<number> {
  const sequence = await appendEvent(tx, writer, { type: 'status', status: row.status, response: responseState(row) });
  await announceStatus(tx, { projectId: row.project_id, responseId: row.id, agentId: row.agent_id, sequence, status: row.status });
  return sequence;
}

export async function changeStatus(tx: Queryable, writer: JournalWriter, change: StatusChange): Promise<ResponseRow> {
  const before = await lockUnderLease(tx, writer);
  if (isTerminal(before.status)) throw new PalaiError('conflict', `Response ${before.id} is already ${before.status}.`);
  const to = 'status' in change ? change.status : change.to;
  if (!canTransition(before.status, to)) throw new IllegalTransition(before.id, before.status, to);
  if ('status' in change) {
    await tx.query(
      `UPDATE responses SET status = $2, output = $3, usage = $4, error = $5, completed_at = now(),
         lease_owner = NULL, lease_expires_at = NULL, wake_at = NULL, lease_token = lease_token + 1
       WHERE id = $1`,
      [before.id, to, JSON.stringify(change.output), change.usage && JSON.stringify(change.usage), change.error && JSON.stringify(change.error)],
    );
    // The session gets the response's output once, when it ends; cut-off items stay out of it.
    if (before.session_id) {
      const finished = change.output.filter((item) => item.status !== 'incomplete');
      await appendSessionItems(tx, before.project_id, before.session_id, before.id, finished);
    }
  } else if (to === 'in_progress') {
    // An API action answered the last thing the response waited for: hand it back to the workers.
    await tx.query(
      `UPDATE responses SET status = 'in_progress', lease_owner = NULL, lease_expires_at = NULL, wake_at = NULL,
         lease_token = lease_token + 1 WHERE id = $1`,
      [before.id],
    );
  } else {
    // Parked: no lease, and a wake-up at the earliest approval deadline or the response's own deadline.
    await tx.query(
      `UPDATE responses SET status = $2, lease_owner = NULL, lease_expires_at = NULL,
         wake_at = (SELECT min(t) FROM (
           SELECT min(approval_deadline) AS t FROM tool_calls WHERE response_id = $1 AND status = 'awaiting_approval'
           UNION ALL SELECT deadline_at FROM responses WHERE id = $1) AS deadlines)
       WHERE id = $1`,
      [before.id, to],
    );
  }
  const after = await requireResponse(tx, writer.projectId, writer.responseId);
  // The token may have moved on with this very write: the event is written by the row lock's holder.
  await journalStatus(tx, { ...writer, leaseToken: null }, after);
  if (to === 'in_progress') await tx.query('SELECT pg_notify($1, $2)', [WORK_CHANNEL, before.id]);
  return after;
}

/** Commits the terminal state, the session's new items and the one terminal event together. */
export const finishResponse = (tx: Queryable, writer: JournalWriter, outcome: Outcome): Promise<ResponseRow> => changeStatus(tx, writer, outcome);

/** The waiting status the open calls imply; approval first, since nothing runs before it. */
export function waitingStatusFor(openCalls: Pick<ToolCallRow, 'status'>[]): WaitingStatus | null {
  if (openCalls.some((c) => c.status === 'awaiting_approval')) return 'waiting_for_approval';
  if (openCalls.some((c) => c.status === 'awaiting_output')) return 'waiting_for_tool';
  if (openCalls.some((c) => c.status === 'awaiting_input')) return 'waiting_for_input';
  return null;
}
