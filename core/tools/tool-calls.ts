// Tool calls have a lifecycle of their own, committed row by row:
//
//   awaiting_approval → ready (approved) | completed (denied, or approval timed out)
//   ready → running → completed | awaiting_output | awaiting_input | parked
//   awaiting_output | awaiting_input → completed (the caller or the human answered)
//   awaiting_input → ready (answered, when the tool asked to be resumed with the answer)
//   parked → completed (an outside party answered, or its deadline passed: parked-calls.ts)
//
// `running` is committed before a tool executes, so after a crash the next worker
// knows the call may have run and retries it with the same idempotency key;
// `completed` is committed with the output, so a completed call never runs again.
// A tool's `checkpoint` is committed on the row while it runs (a remote task id)
// and survives every retry and resumption of the call.
import type { FunctionCallOutputItem, ToolRisk } from '../../generated/schemas.js';
import { newId } from '../ids.js';
import { WAITING_STATUSES } from '../response-status.js';
import type { Queryable } from '../store/db.js';

export type ToolCallStatus = 'awaiting_approval' | 'ready' | 'running' | 'awaiting_output' | 'awaiting_input' | 'parked' | 'completed';

export const AWAITING_STATUSES: readonly ToolCallStatus[] = ['awaiting_approval', 'awaiting_output', 'awaiting_input'];

export interface ToolCallRow {
  response_id: string;
  call_id: string;
  item_id: string;
  position: number;
  name: string;
  kind: string;
  arguments: string;
  risk: ToolRisk;
  status: ToolCallStatus;
  question: string | null;
  approval_deadline: Date | null;
  output: string | null;
  attempts: number;
  /** What the tool saved while running (saveCheckpoint), or null. */
  checkpoint: unknown;
  /** Parked for the user's answer, which goes back to the tool (a resumable await_input). */
  resumes_on_answer: boolean;
  /** The user's answer to a resumable question, until the tool asks again or completes. */
  answer: string | null;
  /** An outside party's answer to a parked call (or to one still running that will park), once given. */
  park_answer: string | null;
  /** What the person who approved the call was shown (ResolvedTool.approvalDisplay), or null. */
  approval_display: Record<string, unknown> | null;
  /** The parts of a file profile a wake's grants confine the call to (paths relative to it), or null: not confined. */
  confined_to: string[] | null;
}

export interface NewToolCall {
  callId: string;
  itemId: string;
  name: string;
  kind: string;
  arguments: string;
  risk: ToolRisk;
  status: ToolCallStatus;
  output?: string;
  approvalTimeoutSeconds?: number;
  /** The call gate's record of the call (a JSON row of objective_actions), written by the call's own INSERT. */
  gateRecord?: Record<string, unknown> | null;
  /** What a person approving it is shown (ResolvedTool.approvalDisplay). */
  approvalDisplay?: Record<string, unknown>;
  /** The parts of a file profile the call gate confined it to (GateVerdict.confinedTo). */
  confinedTo?: string[] | null;
}

/** How a call that ran ended, for the action journal (null: it ended otherwise). */
export type CallOutcome = 'succeeded' | 'failed' | 'uncertain';

const COLUMNS =
  'response_id, call_id, item_id, position, name, kind, arguments, risk, status, question, approval_deadline, output, attempts, checkpoint, resumes_on_answer, answer, park_answer, approval_display, confined_to';

export async function insertToolCalls(tx: Queryable, projectId: string, responseId: string, calls: NewToolCall[]): Promise<void> {
  const { rows } = await tx.query<{ next: number }>('SELECT COALESCE(max(position) + 1, 0) AS next FROM tool_calls WHERE response_id = $1', [responseId]);
  let position = rows[0].next;
  for (const call of calls) {
    const insert = `INSERT INTO tool_calls (project_id, response_id, call_id, item_id, position, name, kind, arguments, risk, status, output,
         approval_deadline, completed_at, approval_display, confined_to)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
         CASE WHEN $12::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $12::integer) END,
         CASE WHEN $10 = 'completed' THEN now() END, $13::jsonb, $14::jsonb)`;
    // A gated call's record goes in with it, in the same statement: the verdict commits with the call.
    const gated = call.gateRecord
      ? `WITH c AS (${insert} RETURNING response_id, call_id)
         INSERT INTO objective_actions SELECT a.* FROM c,
           jsonb_populate_record(NULL::objective_actions, $15::jsonb || jsonb_build_object('response_id', c.response_id, 'call_id', c.call_id, 'created_at', now())) a`
      : insert;
    await tx.query(gated, [
      projectId,
      responseId,
      call.callId,
      call.itemId,
      position++,
      call.name,
      call.kind,
      call.arguments,
      call.risk,
      call.status,
      call.output ?? null,
      call.approvalTimeoutSeconds ?? null,
      call.approvalDisplay ? JSON.stringify(call.approvalDisplay) : null,
      call.confinedTo ? JSON.stringify(call.confinedTo) : null,
      ...(call.gateRecord ? [JSON.stringify(call.gateRecord)] : []),
    ]);
  }
}

/** Calls of the response that are not completed, in the order the model made them. */
export async function openToolCalls(db: Queryable, responseId: string, forUpdate = false): Promise<ToolCallRow[]> {
  const { rows } = await db.query<ToolCallRow>(
    `SELECT ${COLUMNS} FROM tool_calls WHERE response_id = $1 AND status <> 'completed' ORDER BY position${forUpdate ? ' FOR UPDATE' : ''}`,
    [responseId],
  );
  return rows;
}

/**
 * The waiting response that awaits the outputs of all these client calls, run
 * by `agent` (its id or name; null: any), or null when no one response does. A
 * response that ended (cancelled, say) keeps its calls' last status but awaits
 * nothing. Served by the partial index on awaited calls (migration 0013).
 */
export async function responseAwaitingOutputs(db: Queryable, projectId: string, callIds: string[], agent: string | null): Promise<string | null> {
  const { rows } = await db.query<{ response_id: string }>(
    `SELECT t.response_id FROM tool_calls t JOIN responses r ON r.id = t.response_id JOIN agents a ON a.id = r.agent_id
     WHERE t.project_id = $1 AND t.call_id = ANY($2::text[]) AND t.status = 'awaiting_output'
       AND r.status = ANY($5::text[]) AND ($4::text IS NULL OR a.id = $4 OR a.name = $4)
     GROUP BY t.response_id HAVING count(DISTINCT t.call_id) = $3`,
    [projectId, callIds, new Set(callIds).size, agent, WAITING_STATUSES],
  );
  return rows.length === 1 ? rows[0].response_id : null;
}

export async function setCallStatus(tx: Queryable, responseId: string, callId: string, status: ToolCallStatus, question: string | null = null): Promise<void> {
  await tx.query('UPDATE tool_calls SET status = $3, question = $4 WHERE response_id = $1 AND call_id = $2', [responseId, callId, status, question]);
}

/**
 * Parks a call for the human's answer. `resume`: the answer goes back to the
 * tool (resumeWithAnswer) instead of becoming its output.
 */
export async function parkForInput(tx: Queryable, responseId: string, callId: string, question: string, resume: boolean): Promise<void> {
  await tx.query(
    `UPDATE tool_calls SET status = 'awaiting_input', question = $3, resumes_on_answer = $4, answer = NULL WHERE response_id = $1 AND call_id = $2`,
    [responseId, callId, question, resume],
  );
}

/** The answer to a resumable question: the call runs again, with the answer and its checkpoint. */
export async function resumeWithAnswer(tx: Queryable, responseId: string, callId: string, answer: string): Promise<void> {
  await tx.query(`UPDATE tool_calls SET status = 'ready', answer = $3, question = NULL WHERE response_id = $1 AND call_id = $2`, [responseId, callId, answer]);
}

/** Commits what a running call saved; false when the call is not running (nothing written). */
export async function saveCheckpoint(tx: Queryable, responseId: string, callId: string, checkpoint: unknown): Promise<boolean> {
  const { rowCount } = await tx.query(`UPDATE tool_calls SET checkpoint = $3 WHERE response_id = $1 AND call_id = $2 AND status = 'running'`, [
    responseId,
    callId,
    JSON.stringify(checkpoint),
  ]);
  return rowCount > 0;
}

export async function markRunning(tx: Queryable, responseId: string, callId: string): Promise<void> {
  await tx.query(`UPDATE tool_calls SET status = 'running', attempts = attempts + 1 WHERE response_id = $1 AND call_id = $2`, [responseId, callId]);
}

/** The function_call_output item that carries a call's output into the conversation. */
export const outputItem = (callId: string, output: string): FunctionCallOutputItem => ({
  id: newId('fc'),
  type: 'function_call_output',
  call_id: callId,
  output,
  status: 'completed',
});

/** Records the output and returns the function_call_output item that carries it into the conversation. */
export async function completeCall(
  tx: Queryable,
  responseId: string,
  callId: string,
  output: string,
  decision?: Record<string, unknown>,
  outcome?: CallOutcome,
): Promise<FunctionCallOutputItem> {
  await tx.query(
    `UPDATE tool_calls SET status = 'completed', output = $3, completed_at = now(), decision = COALESCE($4, decision), outcome = COALESCE($5, outcome)
     WHERE response_id = $1 AND call_id = $2`,
    [responseId, callId, output, decision ? JSON.stringify(decision) : null, outcome ?? null],
  );
  return outputItem(callId, output);
}

export async function recordDecision(tx: Queryable, responseId: string, callId: string, decision: Record<string, unknown>): Promise<void> {
  await tx.query(`UPDATE tool_calls SET status = 'ready', decision = $3 WHERE response_id = $1 AND call_id = $2`, [
    responseId,
    callId,
    JSON.stringify(decision),
  ]);
}
