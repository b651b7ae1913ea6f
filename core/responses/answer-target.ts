// Which waiting response an admission command answers, instead of starting a
// new response. Clients continue a response that waits for them in three ways:
//   - chaining: `previous_response_id` names it (OpenAI's stateful way);
//   - resending the whole history, which ends with `function_call_output` items
//     answering its pending client calls (the AI SDK's `.responses()`, the
//     Agents SDK's default mode): only those trailing outputs are the answer,
//     the rest of the history is already in the response;
//   - an empty input in its session, after the outputs were added to the
//     session directly: they move from the session into the response.
// Anything else is a new response over the whole conversation, as with OpenAI.
import type { ResponseInputItem } from '../../generated/schemas.js';
import { isWaiting } from '../response-status.js';
import { looseCallOutputs } from '../sessions/sessions.js';
import type { Queryable } from '../store/db.js';
import { openToolCalls, responseAwaitingOutputs } from '../tools/tool-calls.js';
import type { AdmissionCommand } from './admission-command.js';
import { trailingCallOutputs } from './items.js';
import { findResponse, requireResponse, type ResponseRow } from './responses.js';

/** The waiting response a command answers, the items that answer it, and the session items those came from (if any). */
export interface AnswerTarget {
  row: ResponseRow;
  answers: ResponseInputItem[];
  sessionItemIds: string[];
}

/**
 * The waiting response `command` answers, or null when it makes a new one.
 * `lock`: the response is locked (admission), so a concurrent answer or cancel
 * waits, and what was read is checked again under the lock.
 */
export async function answerTarget(db: Queryable, projectId: string, command: AdmissionCommand, lock: boolean): Promise<AnswerTarget | null> {
  if (command.previous_response_id) {
    const previous = await requireResponse(db, projectId, command.previous_response_id, lock);
    return isWaiting(previous.status) ? { row: previous, answers: command.input, sessionItemIds: [] } : null;
  }
  const outputs = trailingCallOutputs(command.input);
  if (outputs.length > 0) {
    const callIds = outputs.map((output) => output.call_id);
    const responseId = await responseAwaitingOutputs(db, projectId, callIds, command.agent ?? null);
    const row = responseId && (await stillAwaiting(db, projectId, responseId, callIds, lock));
    return row && inSession(command, row) ? { row, answers: outputs, sessionItemIds: [] } : null;
  }
  if (command.input.length === 0 && command.session?.kind === 'id') return answeredInSession(db, projectId, command.session.id, lock);
  return null;
}

/** The command names no session, or the response's own. */
const inSession = (command: AdmissionCommand, row: ResponseRow): boolean =>
  command.session === undefined || (command.session.kind === 'id' && command.session.id === row.session_id);

/** The ids of the client calls the response waits for the outputs of. */
const awaitedCalls = async (db: Queryable, responseId: string): Promise<string[]> =>
  (await openToolCalls(db, responseId)).filter((call) => call.status === 'awaiting_output').map((call) => call.call_id);

/** The response, (locked and) still waiting for the outputs of all these calls: a concurrent answer may have come first. */
async function stillAwaiting(db: Queryable, projectId: string, responseId: string, callIds: string[], lock: boolean): Promise<ResponseRow | null> {
  const row = await findResponse(db, projectId, responseId, lock);
  if (!row || !isWaiting(row.status)) return null;
  const awaited = await awaitedCalls(db, row.id);
  return callIds.every((id) => awaited.includes(id)) ? row : null;
}

/** The session's latest response, when it waits for client calls whose outputs are all in the session now. */
async function answeredInSession(db: Queryable, projectId: string, sessionId: string, lock: boolean): Promise<AnswerTarget | null> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM responses WHERE project_id = $1 AND session_id = $2 ORDER BY id DESC LIMIT 1', [
    projectId,
    sessionId,
  ]);
  const row = rows[0] && (await findResponse(db, projectId, rows[0].id, lock));
  if (!row || !isWaiting(row.status)) return null;
  const awaited = await awaitedCalls(db, row.id);
  const loose = await looseCallOutputs(db, sessionId, awaited);
  // The first output the session holds for each call answers it.
  const answers = new Map<string, ResponseInputItem>();
  for (const { item } of loose) {
    if (!answers.has(item.call_id)) answers.set(item.call_id, { type: 'function_call_output', call_id: item.call_id, output: item.output });
  }
  if (awaited.length === 0 || answers.size < awaited.length) return null;
  return { row, answers: [...answers.values()], sessionItemIds: loose.map(({ id }) => id) };
}
