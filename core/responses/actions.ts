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
import { completeWithAnswer } from '../tools/parked-calls.js';
import { completeCall, openToolCalls, recordDecision, resumeWithAnswer, type ToolCallRow, type ToolCallStatus } from '../tools/tool-calls.js';
import { messageText, normalizeInput } from './items.js';
import { requireResponse, type ResponseRow } from './responses.js';
import { appendOutputItems } from './output-items.js';
import { changeStatus, finishResponse, waitingStatusFor } from './status-writer.js';
import { isParked, isSuspended, isTerminal, isWaiting } from '../response-status.js';

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

/** Only an outside party's answer reaches a parked response: its caller is asked nothing. */
async function lockWaiting(tx: Queryable, projectId: string, responseId: string, answers: WaitAnswer[]): Promise<{ row: ResponseRow; calls: ToolCallRow[] }> {
  const row = await requireResponse(tx, projectId, responseId, true);
  const outsideOnly = answers.every((answer) => answer.kind === 'parked');
  if (isParked(row.status) && !outsideOnly) {
    throw new PalaiError('invalid-state', `Response ${row.id} is parked: it waits for an outside party's answer, nothing its caller can give.`);
  }
  if (!(outsideOnly ? isSuspended(row.status) : isWaiting(row.status))) {
    throw new PalaiError('invalid-state', `Response ${row.id} is ${row.status}; it waits for nothing.`);
  }
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

/**
 * One answer to what a response waits for, with where it sits in the request
 * (for errors): a client tool's output, an outside party's answer to a parked
 * call, an approval decision, or the user's answer to a question (the
 * question's call_id when the caller named it).
 */
export type WaitAnswer =
  | { kind: 'output'; call_id: string; output: string; pointer: string }
  | { kind: 'parked'; call_id: string; output: string; pointer: string }
  | { kind: 'decision'; call_id: string; decision: 'approve' | 'deny'; reason: string | null; pointer: string }
  | { kind: 'input'; call_id?: string; text: string; pointer: string };

const AWAITED: Partial<Record<ToolCallStatus, string>> = {
  awaiting_output: 'the output of',
  awaiting_approval: 'a decision on',
  awaiting_input: 'the answer to',
};

/** What the response waits for, in words: "the output of call_1, a decision on call_2". */
function awaitedAnswers(calls: ToolCallRow[]): string {
  return calls.flatMap((c) => (AWAITED[c.status] ? [`${AWAITED[c.status]} ${c.call_id}`] : [])).join(', ');
}

/** The question `text` answers: the one named, or the one asked. */
function askedQuestion(row: ResponseRow, calls: ToolCallRow[], answer: Extract<WaitAnswer, { kind: 'input' }>): ToolCallRow {
  if (answer.call_id !== undefined) return pendingCall(row, calls, answer.call_id, 'awaiting_input', 'an answer', answer.pointer);
  const question = calls.find((c) => c.status === 'awaiting_input');
  if (!question) {
    const awaited = awaitedAnswers(calls);
    throw new PalaiError('invalid-state', `Response ${row.id} has asked no question to answer${awaited ? `; it waits for ${awaited}` : ''}.`, {
      errors: [{ pointer: answer.pointer, detail: 'no question is pending' }],
    });
  }
  return question;
}

/** Records every answer, each call answered once, all in the caller's transaction: all of them or none. */
async function applyAnswers(tx: Queryable, row: ResponseRow, calls: ToolCallRow[], answers: WaitAnswer[]): Promise<void> {
  const answered = new Set<string>();
  const once = (callId: string, pointer: string) => {
    if (answered.has(callId))
      throw new PalaiError('validation-failed', `Call ${JSON.stringify(callId)} is answered twice.`, {
        errors: [{ pointer, detail: 'answers a call already answered' }],
      });
    answered.add(callId);
  };
  const items: Item[] = [];
  const texts = new Map<string, string[]>();
  for (const answer of answers) {
    if (answer.kind === 'input') {
      const question = askedQuestion(row, calls, answer);
      texts.set(question.call_id, [...(texts.get(question.call_id) ?? []), answer.text]);
      continue;
    }
    once(answer.call_id, answer.pointer);
    if (answer.kind === 'output') {
      pendingCall(row, calls, answer.call_id, 'awaiting_output', 'the output', answer.pointer);
      items.push(await completeCall(tx, row.id, answer.call_id, answer.output));
      continue;
    }
    if (answer.kind === 'parked') {
      pendingCall(row, calls, answer.call_id, 'parked', 'an outside answer', answer.pointer);
      items.push(await completeWithAnswer(tx, row.id, answer.call_id, answer.output));
      continue;
    }
    pendingCall(row, calls, answer.call_id, 'awaiting_approval', 'a decision', answer.pointer);
    const decision = { decision: answer.decision, reason: answer.reason, decided_at: new Date().toISOString() };
    if (answer.decision === 'approve') await recordDecision(tx, row.id, answer.call_id, decision);
    else {
      const output = JSON.stringify({ denied: true, reason: answer.reason ?? 'A reviewer denied this call.' });
      items.push(await completeCall(tx, row.id, answer.call_id, output, decision));
    }
  }
  // Several messages answering one question are one answer, in the order given.
  // A tool that asked to be resumed gets the answer back; otherwise it is the call's output.
  for (const [callId, parts] of texts) {
    once(callId, answers.find((a) => a.kind === 'input')!.pointer);
    if (calls.find((c) => c.call_id === callId)?.resumes_on_answer) await resumeWithAnswer(tx, row.id, callId, parts.join('\n'));
    else items.push(await completeCall(tx, row.id, callId, parts.join('\n')));
  }
  await settle(tx, row, items);
}

/** Answers a waiting response under its row lock; an answer that does not apply changes nothing. */
export async function answerWaiting(
  tx: Queryable,
  projectId: string,
  responseId: string,
  answers: WaitAnswer[],
  idem?: IdempotencyClaim,
): Promise<ResponseRow> {
  await reserveKey(tx, projectId, idem, responseId);
  const { row, calls } = await lockWaiting(tx, projectId, responseId, answers);
  await applyAnswers(tx, row, calls, answers);
  return requireResponse(tx, projectId, responseId);
}

export async function submitToolOutputs(
  db: Db,
  projectId: string,
  responseId: string,
  request: SubmitToolOutputsRequest,
  idem?: IdempotencyClaim,
): Promise<ResponseRow> {
  const answers = request.outputs.map(({ call_id, output }, index): WaitAnswer => ({ kind: 'output', call_id, output, pointer: `/outputs/${index}/call_id` }));
  return db.transaction((tx) => answerWaiting(tx, projectId, responseId, answers, idem));
}

export async function decideApproval(
  db: Db,
  projectId: string,
  responseId: string,
  request: ApprovalDecisionRequest,
  idem?: IdempotencyClaim,
): Promise<ResponseRow> {
  const answer: WaitAnswer = { kind: 'decision', call_id: request.call_id, decision: request.decision, reason: request.reason ?? null, pointer: '/call_id' };
  return db.transaction((tx) => answerWaiting(tx, projectId, responseId, [answer], idem));
}

export async function submitInput(db: Db, projectId: string, responseId: string, request: SubmitInputRequest, idem?: IdempotencyClaim): Promise<ResponseRow> {
  const text = normalizeInput(request.input)
    .map((item) => (item.type === 'message' ? messageText(item) : ''))
    .join('\n');
  return db.transaction((tx) => answerWaiting(tx, projectId, responseId, [{ kind: 'input', text, pointer: '/input' }], idem));
}

/**
 * Idempotent. A response nobody runs (queued, waiting or parked) ends canceled at once;
 * a running one gets a cancel request its worker observes within one step (a
 * NOTIFY interrupts even a streaming model call).
 */
export async function cancelResponse(db: Db, projectId: string, responseId: string, idem?: IdempotencyClaim): Promise<ResponseRow> {
  return db.transaction(async (tx) => {
    await reserveKey(tx, projectId, idem, responseId);
    return cancelWithin(tx, projectId, responseId);
  });
}

/** The cancel inside the caller's transaction, for a kernel module whose change and cancels commit together (its NOTIFY goes at the commit). */
export async function cancelWithin(tx: Queryable, projectId: string, responseId: string): Promise<ResponseRow> {
  const row = await requireResponse(tx, projectId, responseId, true);
  if (row.status === 'canceled') return row;
  if (isTerminal(row.status)) throw new PalaiError('invalid-state', `Response ${row.id} already ended as ${row.status}; it cannot be cancelled.`);
  if (row.status === 'queued' || isSuspended(row.status)) {
    return finishResponse(tx, apiWriter(row), { status: 'canceled', output: [], error: null });
  }
  await tx.query('UPDATE responses SET cancel_requested_at = COALESCE(cancel_requested_at, now()) WHERE id = $1', [row.id]);
  await tx.query('SELECT pg_notify($1, $2)', [CANCEL_CHANNEL, row.id]);
  return requireResponse(tx, projectId, responseId);
}
