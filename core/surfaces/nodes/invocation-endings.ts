// Ending an invocation: the ledger's outcome and the answer to the response's
// parked call, in the caller's transaction (answerParkedCallIn), so a crash
// between them cannot leave a call waiting on an invocation that ended.
import type { NodeCommandResult, NodeFailureCode, NodeInvocationState } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import type { Queryable } from '../../store/db.js';
import { answerParkedCallIn } from '../../tools/answer-parked-call.js';
import { canMove } from './invocation-states.js';
import { boundedMessage, invocationOutput, type InvocationRow } from './node-views.js';

export interface InvocationEnding {
  state: Extract<NodeInvocationState, 'succeeded' | 'failed' | 'canceled' | 'unknown' | 'expired'>;
  result?: NodeCommandResult | null;
  failureCode?: NodeFailureCode | null;
  failureMessage?: string | null;
  terminationConfirmed?: boolean | null;
}

/** The invocation row, locked; null when there is none. */
export async function lockInvocation(tx: Queryable, id: string): Promise<InvocationRow | null> {
  const { rows } = await tx.query<InvocationRow>('SELECT * FROM node_invocations WHERE id = $1 FOR UPDATE', [id]);
  return rows[0] ?? null;
}

/**
 * Ends a locked open invocation and answers its call; the row as it is now.
 * An invocation already ended is returned as it is. A call that can no longer
 * take the answer (its response ended, its deadline passed) leaves the outcome
 * recorded in the ledger all the same.
 */
export async function endInvocation(tx: Queryable, row: InvocationRow, ending: InvocationEnding): Promise<InvocationRow> {
  if (!canMove(row.state, ending.state)) return row;
  const { rows } = await tx.query<InvocationRow>(
    `UPDATE node_invocations SET state = $2, result = $3, exit_code = $4, failure_code = $5, failure_message = $6,
       termination_confirmed = $7, completed_at = now(), updated_at = now()
     WHERE id = $1 RETURNING *`,
    [
      row.id,
      ending.state,
      ending.result ? JSON.stringify(ending.result) : null,
      ending.result?.exit_code ?? null,
      ending.failureCode ?? null,
      ending.failureMessage ? boundedMessage(ending.failureMessage) : null,
      ending.terminationConfirmed ?? null,
    ],
  );
  const ended = rows[0];
  await answerCall(tx, ended);
  return ended;
}

/** Answers the invocation's parked call with its output; a call that takes no answer any more is left as it is. */
async function answerCall(tx: Queryable, row: InvocationRow): Promise<void> {
  const output = invocationOutput(row);
  if (output === null) return;
  try {
    await answerParkedCallIn(tx, row.project_id, row.response_id, row.call_id, { output, outcome: outcomeOf(row.state) });
  } catch (error) {
    // Checked before anything is written, so the transaction stays usable.
    if (!(error instanceof PalaiError)) throw error;
  }
}

/** An invocation that ended unknown or expired may have run: its action is uncertain, never retried. */
function outcomeOf(state: NodeInvocationState): 'succeeded' | 'failed' | 'uncertain' {
  if (state === 'succeeded') return 'succeeded';
  return state === 'unknown' || state === 'expired' ? 'uncertain' : 'failed';
}
