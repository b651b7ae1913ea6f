// Admission: the response, its input items (and session items) and its
// `response.created` event commit in one transaction before any surface
// acknowledges; a NOTIFY in the same transaction wakes a worker.
import type { CreateResponseRequest, Item } from '../../generated/schemas.js';
import { requireAgent } from '../agents/agents.js';
import { reserveKey, type IdempotencyClaim } from '../idempotency/idempotency.js';
import { PalaiError } from '../errors/palai-error.js';
import { newId } from '../ids.js';
import { WORK_CHANNEL } from '../journal/wakeups.js';
import { appendSessionItems, bindSessionAgent, requireSession } from '../sessions/sessions.js';
import type { Db, Queryable } from '../store/db.js';
import { completeCall, openToolCalls } from '../tools/tool-calls.js';
import { changeStatus, finishResponse, journalStatus } from './status-writer.js';
import { isWaiting } from './status.js';
import { normalizeInput } from './items.js';
import { requireResponse, type ResponseRow } from './responses.js';

export async function admitResponse(db: Db, projectId: string, request: CreateResponseRequest, idem?: IdempotencyClaim): Promise<ResponseRow> {
  return db.transaction(async (tx) => {
    const id = newId('resp');
    // First, so a concurrent duplicate waits here and then replays this response.
    await reserveKey(tx, projectId, idem, id);
    // Locked: the first response of an unbound session binds it, and a concurrent one must see that.
    const session = request.session_id ? await requireSession(tx, projectId, request.session_id, true) : null;
    const agentRef = request.model ?? session?.agent_id;
    if (!agentRef) {
      throw new PalaiError('invalid-request', `Session ${session!.id} has no agent yet; name one as model.`, { errors: [{ pointer: '/model', detail: 'is required for the first response of this session' }] });
    }
    const agent = await requireAgent(tx, projectId, agentRef);
    if (session && session.agent_id === null) await bindSessionAgent(tx, session.id, agent.id);
    else if (session && agent.id !== session.agent_id) {
      throw new PalaiError('invalid-request', `Session ${session.id} belongs to agent "${session.agent}".`, {
        errors: [{ pointer: '/model', detail: `must name the session's agent "${session.agent}"` }],
      });
    }
    const input = normalizeInput(request.input);
    if (request.previous_response_id) await continueFrom(tx, projectId, request.previous_response_id, input);
    const timeout = agent.spec.limits?.timeout_seconds ?? null;
    await tx.query(
      `INSERT INTO responses (id, project_id, agent_id, agent_revision_id, session_id, previous_response_id, status,
         input, instructions, metadata, options, background, deadline_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10, $11,
         CASE WHEN $12::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $12::integer) END)`,
      [
        id,
        projectId,
        agent.id,
        agent.revision_id,
        session?.id ?? null,
        request.previous_response_id ?? null,
        JSON.stringify(input),
        request.instructions ?? null,
        JSON.stringify(request.metadata ?? {}),
        JSON.stringify(runOptions(request)),
        request.background === true,
        timeout,
      ],
    );
    if (session) await appendSessionItems(tx, projectId, session.id, id, input);
    const row = await requireResponse(tx, projectId, id);
    await journalStatus(tx, { projectId, responseId: id, leaseToken: null }, row);
    await tx.query('SELECT pg_notify($1, $2)', [WORK_CHANNEL, id]);
    return row;
  });
}

/** What the request asks of this run beyond the agent's spec; absent values leave the agent's. */
function runOptions(request: CreateResponseRequest): ResponseRow['options'] {
  const { temperature, max_output_tokens, user } = request;
  return {
    ...(temperature != null ? { temperature } : {}),
    ...(max_output_tokens != null ? { max_output_tokens } : {}),
    ...(user != null ? { user } : {}),
  };
}

/**
 * OpenAI-style continuation: a response waiting for client tool outputs is
 * answered by a new response whose input carries them as function_call_output
 * items. The outputs are recorded on the waiting response, which ends completed;
 * the new response carries the conversation on.
 */
async function continueFrom(tx: Queryable, projectId: string, previousId: string, input: Item[]): Promise<void> {
  const previous = await requireResponse(tx, projectId, previousId, true);
  if (!isWaiting(previous.status)) return;
  const awaiting = (await openToolCalls(tx, previous.id, true)).filter((c) => c.status === 'awaiting_output');
  const outputs = new Map(input.flatMap((item) => (item.type === 'function_call_output' ? [[item.call_id, item.output] as const] : [])));
  const missing = awaiting.filter((c) => !outputs.has(c.call_id)).map((c) => c.call_id);
  if (previous.status !== 'waiting_for_tool' || missing.length > 0) {
    throw new PalaiError('invalid-state', `Response ${previous.id} is ${previous.status}; ${missing.length > 0 ? `send function_call_output items for ${missing.join(', ')}` : 'answer it with its own endpoint'} first.`, {
      errors: [{ pointer: '/previous_response_id', detail: `the response is ${previous.status}` }],
    });
  }
  for (const call of awaiting) await completeCall(tx, previous.id, call.call_id, outputs.get(call.call_id)!);
  const writer = { projectId, responseId: previous.id, leaseToken: null };
  // Its wait is over (in_progress), and its work is done: the new response carries the conversation on.
  await changeStatus(tx, writer, { to: 'in_progress' });
  await finishResponse(tx, writer, { status: 'completed', output: previous.output, usage: previous.usage, error: null });
}
