// Parked calls: a tool call that waits for an external party (a companion node,
// another service) without holding a worker. Its row, in its own lifecycle:
//
//   running → parked                    the tool parked it (a deadline set)
//   running → completed                 it parked with an answer already kept
//   parked  → completed (answered)      the party answered before the deadline
//   parked  → completed (timed_out)     the deadline passed first
//
// An answer and the deadline never both end a call: every write below runs
// under the response's row lock (an answering command locks the row first, a
// worker writes under its lease, which locks it too), and an answer is refused
// once the deadline passed by the store's clock, whether or not the timeout
// was committed yet. An answer that comes while the call still runs, or while
// the response is being worked on, is kept on the row (`park_answer`) and ends
// the call at the worker's next look (unless its tool ends the call with an
// output of its own instead, which then stands).
import type { FunctionCallOutputItem } from '../../generated/schemas.js';
import type { Queryable } from '../store/db.js';
import { outputItem } from './tool-calls.js';

/** What the call's output is when nobody answers in time, unless its tool said otherwise. */
export const DEFAULT_TIMEOUT_OUTPUT = JSON.stringify({ error: 'No answer came before the deadline.', timed_out: true });
/** The longest a call may stay parked: thirty days. */
export const MAX_PARK_TIMEOUT_MS = 30 * 24 * 60 * 60 * 1000;
/** The longest answer, as for a client's tool output. */
export const MAX_PARKED_ANSWER_LENGTH = 1_048_576;

/** A parked call as an answering command reads it. */
export interface ParkedCallRow {
  status: string;
  park_answer: string | null;
  park_ended: 'answered' | 'timed_out' | null;
  park_deadline: Date | null;
  /** The deadline passed, by the store's clock. */
  past_deadline: boolean;
}

const itemsOf = (rows: { call_id: string; output: string; position: number }[]): FunctionCallOutputItem[] =>
  rows.sort((a, b) => a.position - b.position).map((r) => outputItem(r.call_id, r.output));

/**
 * Parks a running call until `timeoutMs` from now. When an answer was kept
 * while it ran, the call completes with it instead: the item to append, or null.
 */
export async function parkCall(
  tx: Queryable,
  responseId: string,
  callId: string,
  timeoutMs: number,
  timeoutOutput: string,
): Promise<FunctionCallOutputItem | null> {
  const { rows } = await tx.query<{ call_id: string; output: string; position: number }>(
    `UPDATE tool_calls SET park_deadline = now() + $3 * interval '1 millisecond', park_timeout_output = $4,
       status = CASE WHEN park_answer IS NULL THEN 'parked' ELSE 'completed' END,
       output = park_answer, park_ended = CASE WHEN park_answer IS NULL THEN NULL ELSE 'answered' END,
       completed_at = CASE WHEN park_answer IS NULL THEN NULL ELSE now() END
     WHERE response_id = $1 AND call_id = $2 AND status = 'running'
     RETURNING call_id, output, position`,
    [responseId, callId, timeoutMs, timeoutOutput],
  );
  return rows[0]?.output != null ? itemsOf(rows)[0] : null;
}

/** Completes the parked calls whose answer was kept or whose deadline passed; their items, in call order. */
export async function completeDueParkedCalls(tx: Queryable, responseId: string): Promise<FunctionCallOutputItem[]> {
  const { rows } = await tx.query<{ call_id: string; output: string; position: number }>(
    `UPDATE tool_calls SET status = 'completed', completed_at = now(), output = COALESCE(park_answer, park_timeout_output),
       park_ended = CASE WHEN park_answer IS NULL THEN 'timed_out' ELSE 'answered' END
     WHERE response_id = $1 AND status = 'parked' AND (park_answer IS NOT NULL OR park_deadline <= now())
     RETURNING call_id, output, position`,
    [responseId],
  );
  return itemsOf(rows);
}

/** Whether a parked call of the response is due now: read under the row lock before the response is parked. */
export async function hasDueParkedCalls(tx: Queryable, responseId: string): Promise<boolean> {
  const { rows } = await tx.query(
    `SELECT 1 FROM tool_calls WHERE response_id = $1 AND status = 'parked' AND (park_answer IS NOT NULL OR park_deadline <= now()) LIMIT 1`,
    [responseId],
  );
  return rows.length > 0;
}

export async function readParkedCall(tx: Queryable, responseId: string, callId: string): Promise<ParkedCallRow | null> {
  const { rows } = await tx.query<ParkedCallRow>(
    `SELECT status, park_answer, park_ended, park_deadline, COALESCE(park_deadline <= now(), false) AS past_deadline
     FROM tool_calls WHERE response_id = $1 AND call_id = $2 FOR UPDATE`,
    [responseId, callId],
  );
  return rows[0] ?? null;
}

/** Keeps an answer for a call that has not parked yet, or for a response a worker holds. */
export async function keepAnswer(tx: Queryable, responseId: string, callId: string, answer: string): Promise<void> {
  await tx.query('UPDATE tool_calls SET park_answer = $3 WHERE response_id = $1 AND call_id = $2', [responseId, callId, answer]);
}

/** Completes a parked call with the party's answer, for a response that waits; its item. */
export async function completeWithAnswer(tx: Queryable, responseId: string, callId: string, answer: string): Promise<FunctionCallOutputItem> {
  await tx.query(
    `UPDATE tool_calls SET status = 'completed', completed_at = now(), output = $3, park_answer = $3, park_ended = 'answered'
     WHERE response_id = $1 AND call_id = $2 AND status = 'parked'`,
    [responseId, callId, answer],
  );
  return outputItem(callId, answer);
}
