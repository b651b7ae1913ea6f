// Answering a parked call: the command an outside party's surface calls (a
// companion node's gateway with a command's result). Under the response's row
// lock, in one transaction with the caller's inbox claim:
//   - the answer a call already has, again → nothing changes (a replay);
//   - another answer for a call that has one → idempotency-conflict;
//   - a call whose deadline passed (by the store's clock) → invalid-state;
//   - a parked call of a suspended response (parked, or waiting on something
//     else too) → its output, and the response goes back to the workers when
//     nothing else holds it;
//   - a call still running, or a response a worker holds → the answer is kept
//     and ends the call at the worker's next look (see parked-calls.ts).
import { PalaiError } from '../errors/palai-error.js';
import { reserveKey, type IdempotencyClaim } from '../idempotency/idempotency.js';
import { isSuspended, isTerminal } from '../response-status.js';
import { answerWaiting } from '../responses/actions.js';
import { requireResponse, type ResponseRow } from '../responses/responses.js';
import type { Db, Queryable } from '../store/db.js';
import { keepAnswer, MAX_PARKED_ANSWER_LENGTH, readParkedCall } from './parked-calls.js';

/** What the party answers: the call's output, as the model will see it. */
export interface ParkedCallAnswer {
  output: string;
  /** How the party's work ended when not plainly (failed; uncertain: it may have acted), for an objective's action journal. */
  outcome?: 'succeeded' | 'failed' | 'uncertain';
}

function checkAnswer(answer: ParkedCallAnswer): string {
  if (typeof answer?.output !== 'string') {
    throw new PalaiError('validation-failed', "A parked call's answer has an output, a text.", { errors: [{ pointer: '/output', detail: 'not a text' }] });
  }
  if (answer.output.length > MAX_PARKED_ANSWER_LENGTH) {
    const detail = `A parked call's answer is at most ${MAX_PARKED_ANSWER_LENGTH} characters.`;
    throw new PalaiError('payload-too-large', detail, { errors: [{ pointer: '/output', detail: 'too long' }] });
  }
  return answer.output;
}

export async function answerParkedCall(
  db: Db,
  projectId: string,
  responseId: string,
  callId: string,
  answer: ParkedCallAnswer,
  idem?: IdempotencyClaim,
): Promise<ResponseRow> {
  return db.transaction(async (tx) => {
    await reserveKey(tx, projectId, idem, responseId);
    return answerParkedCallIn(tx, projectId, responseId, callId, answer);
  });
}

/** The same inside the caller's transaction (a surface's wing writing its own record of the answer with it). */
export async function answerParkedCallIn(tx: Queryable, projectId: string, responseId: string, callId: string, answer: ParkedCallAnswer): Promise<ResponseRow> {
  const output = checkAnswer(answer);
  const row = await requireResponse(tx, projectId, responseId, true);
  const call = await readParkedCall(tx, row.id, callId);
  const named = `call ${JSON.stringify(callId)} of response ${row.id}`;
  if (!call) throw new PalaiError('not-found', `Response ${row.id} has no tool call ${JSON.stringify(callId)}.`);
  if (call.park_answer !== null) {
    if (call.park_answer === output) return row;
    throw new PalaiError('idempotency-conflict', `The ${named} was already answered, differently.`);
  }
  const late = call.park_ended === 'timed_out' || (call.status === 'parked' && call.past_deadline);
  if (late) {
    const at = call.park_deadline ? ` (${new Date(call.park_deadline).toISOString()})` : '';
    throw new PalaiError(
      'invalid-state',
      `The ${named} was not answered before its deadline${at}; it ended with its timeout outcome, and this answer came too late.`,
    );
  }
  if (isTerminal(row.status)) throw new PalaiError('invalid-state', `Response ${row.id} already ended as ${row.status}; its calls take no answer.`);
  if (call.status !== 'parked' && call.status !== 'running') {
    throw new PalaiError('invalid-state', `The ${named} does not wait for an outside answer (it is ${call.status.replace('_', ' ')}).`);
  }
  if (answer.outcome !== undefined) {
    await tx.query('UPDATE tool_calls SET outcome = $3 WHERE response_id = $1 AND call_id = $2', [row.id, callId, answer.outcome]);
  }
  if (call.status === 'parked' && isSuspended(row.status)) {
    return answerWaiting(tx, projectId, row.id, [{ kind: 'parked', call_id: callId, output, pointer: '/call_id' }]);
  }
  await keepAnswer(tx, row.id, callId, output);
  return requireResponse(tx, projectId, row.id);
}
