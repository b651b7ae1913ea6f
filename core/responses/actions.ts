// What callers do to a response after admission: answer what it waits for
// (client tool outputs, an approval decision, a user's answer) or cancel it.
// Each action checks the state under a row lock and changes nothing when it
// does not apply; the answer becomes the tool's result in the conversation.
import type { ApprovalDecisionRequest, Item, SubmitInputRequest, SubmitToolOutputsRequest } from '../../generated/schemas.js';
import { PalaiError } from '../errors/palai-error.js';
import { reserveKey, type IdempotencyClaim } from '../idempotency/idempotency.js';
import type { JournalWriter } from '../journal/journal.js';
import { CANCEL_CHANNEL } from '../journal/wakeups.js';
import type { Db, Queryable } from '../store/db.js';
import { completeCall, openToolCalls, recordDecision, type ToolCallRow, type ToolCallStatus } from '../tools/tool-calls.js';
import { messageText, normalizeInput } from './items.js';
import { requireResponse, type ResponseRow } from './responses.js';
import { appendOutputItems } from './output-items.js';
import { changeStatus, finishResponse, waitingStatusFor } from './status-writer.js';
import { isTerminal, isWaiting } from './status.js';

const apiWriter = (row: ResponseRow): JournalWriter => ({ projectId: row.project_id, responseId: row.id, leaseToken: null });

/** `pointer` locates the call_id in the request body. */
function pendingCall(row: ResponseRow, calls: ToolCallRow[], callId: string, expected: ToolCallStatus, what: string, pointer: string): ToolCallRow {
  const call = calls.find((c) => c.call_id === callId);
  if (!call || call.status !== expected) {
    throw new PalaiError('invalid-state', `Response ${row.id} is not waiting for ${what} of call ${JSON.stringify(callId)}.`, {
      errors: [{ pointer, detail: call ? `the call is ${call.status.replace('_', ' ')}` : 'no such call is pending' }],
    });
  }
  return call;
}

async function lockWaiting(tx: Queryable, projectId: string, responseId: string): Promise<{ row: ResponseRow; calls: ToolCallRow[] }> {
  const row = await requireResponse(tx, projectId, responseId, true);
  if (!isWaiting(row.status)) throw new PalaiError('invalid-state', `Response ${row.id} is ${row.status}; it waits for nothing.`);
  return { row, calls: await openToolCalls(tx, row.id, true) };
}

/**
 * After answers were recorded: back to the workers if anything can run or the
 * response now waits for something else (they park it there), else still
 * waiting. The answers' output items are journaled after the resume, in the
 * order a worker resuming the response (an approval timeout) writes them.
 */
async function settle(tx: Queryable, row: ResponseRow, answers: Item[]): Promise<void> {
  const open = await openToolCalls(tx, row.id);
  const waiting = waitingStatusFor(open);
  if (waiting !== row.status || open.some((c) => c.status === 'ready')) {
    await changeStatus(tx, apiWriter(row), { to: 'in_progress' });
    return appendOutputItems(tx, apiWriter(row), answers);
  }
  await appendOutputItems(tx, apiWriter(row), answers);
}

export async function submitToolOutputs(db: Db, projectId: string, responseId: string, request: SubmitToolOutputsRequest, idem?: IdempotencyClaim): Promise<ResponseRow> {
  return db.transaction(async (tx) => {
    await reserveKey(tx, projectId, idem, responseId);
    const { row, calls } = await lockWaiting(tx, projectId, responseId);
    const seen = new Set<string>();
    for (const [index, { call_id }] of request.outputs.entries()) {
      if (seen.has(call_id)) throw new PalaiError('validation-failed', 'Each call_id may appear once.', { errors: [{ pointer: `/outputs/${index}/call_id`, detail: 'is a duplicate' }] });
      seen.add(call_id);
      pendingCall(row, calls, call_id, 'awaiting_output', 'the output', `/outputs/${index}/call_id`);
    }
    const items = [];
    for (const { call_id, output } of request.outputs) items.push(await completeCall(tx, row.id, call_id, output));
    await settle(tx, row, items);
    return requireResponse(tx, projectId, responseId);
  });
}

export async function decideApproval(db: Db, projectId: string, responseId: string, request: ApprovalDecisionRequest, idem?: IdempotencyClaim): Promise<ResponseRow> {
  return db.transaction(async (tx) => {
    await reserveKey(tx, projectId, idem, responseId);
    const { row, calls } = await lockWaiting(tx, projectId, responseId);
    pendingCall(row, calls, request.call_id, 'awaiting_approval', 'a decision', '/call_id');
    const decision = { decision: request.decision, reason: request.reason ?? null, decided_at: new Date().toISOString() };
    const answers: Item[] = [];
    if (request.decision === 'approve') {
      await recordDecision(tx, row.id, request.call_id, decision);
    } else {
      const output = JSON.stringify({ denied: true, reason: request.reason ?? 'A reviewer denied this call.' });
      answers.push(await completeCall(tx, row.id, request.call_id, output, decision));
    }
    await settle(tx, row, answers);
    return requireResponse(tx, projectId, responseId);
  });
}

export async function submitInput(db: Db, projectId: string, responseId: string, request: SubmitInputRequest, idem?: IdempotencyClaim): Promise<ResponseRow> {
  return db.transaction(async (tx) => {
    await reserveKey(tx, projectId, idem, responseId);
    const { row, calls } = await lockWaiting(tx, projectId, responseId);
    const question = calls.find((c) => c.status === 'awaiting_input');
    if (!question) throw new PalaiError('invalid-state', `Response ${row.id} has asked no question to answer.`);
    const answer = normalizeInput(request.input)
      .map((item) => (item.type === 'message' ? messageText(item) : ''))
      .join('\n');
    await settle(tx, row, [await completeCall(tx, row.id, question.call_id, answer)]);
    return requireResponse(tx, projectId, responseId);
  });
}

/**
 * Idempotent. A response nobody runs (queued or waiting) ends canceled at once;
 * a running one gets a cancel request its worker observes within one step (a
 * NOTIFY interrupts even a streaming model call).
 */
export async function cancelResponse(db: Db, projectId: string, responseId: string, idem?: IdempotencyClaim): Promise<ResponseRow> {
  return db.transaction(async (tx) => {
    await reserveKey(tx, projectId, idem, responseId);
    const row = await requireResponse(tx, projectId, responseId, true);
    if (row.status === 'canceled') return row;
    if (isTerminal(row.status)) throw new PalaiError('invalid-state', `Response ${row.id} already ended as ${row.status}; it cannot be cancelled.`);
    if (row.status === 'queued' || isWaiting(row.status)) {
      return finishResponse(tx, apiWriter(row), { status: 'canceled', output: row.output, usage: row.usage, error: null });
    }
    await tx.query('UPDATE responses SET cancel_requested_at = COALESCE(cancel_requested_at, now()) WHERE id = $1', [row.id]);
    await tx.query('SELECT pg_notify($1, $2)', [CANCEL_CHANNEL, row.id]);
    return requireResponse(tx, projectId, responseId);
  });
}
