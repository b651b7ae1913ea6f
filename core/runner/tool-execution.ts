// Running the tool calls a response may run now. Each call is marked `running`
// (committed) before it executes and `completed` with its output (committed)
// after, individually, so parallel calls commit as they finish and a crash
// between the two retries the call with the same idempotency key. What a tool
// saves while it runs (its checkpoint) is committed under the same lease, so a
// worker that lost the response can neither checkpoint nor complete the call.
import type { ResponseRow } from '../responses/responses.js';
import { assertLease } from '../responses/lease.js';
import { appendOutputItems } from '../responses/output-items.js';
import type { Queryable } from '../store/db.js';
import { argumentProblems } from '../tools/broker.js';
import { DEFAULT_TIMEOUT_OUTPUT, MAX_PARK_TIMEOUT_MS, parkCall } from '../tools/parked-calls.js';
import { completeCall, markRunning, parkForInput, saveCheckpoint, setCallStatus, type CallOutcome, type ToolCallRow } from '../tools/tool-calls.js';
import { ToolError, type ToolOutcome } from '../tools/tool-port.js';
import type { RunContext } from './run-context.js';

async function fenced<T>(ctx: RunContext, work: (tx: Queryable) => Promise<T>): Promise<T> {
  return ctx.kernel.db.transaction(async (tx) => {
    await assertLease(tx, ctx.writer);
    return work(tx);
  });
}

/** Commits a call's output and carries it into the conversation as a function_call_output item. */
export async function commitOutput(
  ctx: RunContext,
  call: Pick<ToolCallRow, 'call_id'>,
  output: string,
  decision?: Record<string, unknown>,
  outcome?: CallOutcome,
): Promise<void> {
  await fenced(ctx, async (tx) => {
    const item = await completeCall(tx, ctx.writer.responseId, call.call_id, output, decision, outcome);
    await appendOutputItems(tx, ctx.writer, [item]);
  });
}

const errorOutput = (message: string): string => JSON.stringify({ error: message });

export async function executeToolCall(ctx: RunContext, call: ToolCallRow): Promise<void> {
  const tool = ctx.tools.get(call.name);
  if (!tool) return commitOutput(ctx, call, errorOutput(`There is no tool named "${call.name}".`));
  let args: unknown;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    return commitOutput(ctx, call, errorOutput('The arguments are not valid JSON.'));
  }
  const problems = argumentProblems(tool, args);
  if (problems) return commitOutput(ctx, call, errorOutput(`Invalid arguments: ${problems}`));

  await fenced(ctx, (tx) => markRunning(tx, ctx.writer.responseId, call.call_id));
  const started = performance.now();
  let outcome: ToolOutcome;
  // How it ended, for an objective's action journal: a tool that threw failed, or may have acted (uncertain).
  let ended: CallOutcome = 'succeeded';
  try {
    outcome = await tool.run(args, {
      responseId: ctx.writer.responseId,
      callId: call.call_id,
      idempotencyKey: `${ctx.writer.responseId}:${call.call_id}`,
      signal: ctx.signal,
      attempt: call.attempts + 1,
      checkpoint: call.checkpoint ?? null,
      saveCheckpoint: async (value) => {
        const saved = await fenced(ctx, (tx) => saveCheckpoint(tx, ctx.writer.responseId, call.call_id, value));
        if (!saved) throw new Error(`call ${call.call_id} is not running; its checkpoint was not saved`);
      },
      answer: call.answer,
      approved: call.approval_display,
      confinedTo: call.confined_to,
    });
  } catch (error) {
    ctx.signal.throwIfAborted();
    if (!(error instanceof ToolError)) ctx.log.warn({ err: error, tool: call.name }, 'tool threw');
    ended = error instanceof ToolError && error.uncertain ? 'uncertain' : 'failed';
    outcome = { kind: 'output', output: errorOutput(error instanceof ToolError ? error.message : 'The tool failed.') };
  }
  // Labelled by built-in name or by kind, never by a project's own tool names: /metrics is not per project.
  ctx.kernel.metrics.toolLatency.observe({ tool: tool.kind === 'builtin' ? tool.name : tool.kind }, (performance.now() - started) / 1000);
  switch (outcome.kind) {
    case 'output':
      return commitOutput(ctx, call, outcome.output, undefined, ended);
    case 'await_client':
      return fenced(ctx, (tx) => setCallStatus(tx, ctx.writer.responseId, call.call_id, 'awaiting_output'));
    case 'await_input':
      return fenced(ctx, (tx) => parkForInput(tx, ctx.writer.responseId, call.call_id, outcome.question, outcome.resume === true));
    case 'park':
      return park(ctx, call, outcome);
    default: {
      const unknown: never = outcome;
      throw new Error(`unknown tool outcome ${JSON.stringify(unknown)}`);
    }
  }
}

/** Commits the call as parked; an answer kept while it ran ends it at once. */
async function park(ctx: RunContext, call: ToolCallRow, outcome: Extract<ToolOutcome, { kind: 'park' }>): Promise<void> {
  const { timeoutMs } = outcome;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_PARK_TIMEOUT_MS) {
    ctx.log.warn({ tool: call.name, timeout_ms: timeoutMs }, 'a tool parked a call with an invalid timeout');
    return commitOutput(ctx, call, errorOutput(`The tool parked the call with an invalid timeout (${String(timeoutMs)} ms).`));
  }
  await fenced(ctx, async (tx) => {
    const answered = await parkCall(tx, ctx.writer.responseId, call.call_id, timeoutMs, outcome.timeoutOutput ?? DEFAULT_TIMEOUT_OUTPUT);
    if (answered) await appendOutputItems(tx, ctx.writer, [answered]);
  });
}

/** Approvals whose deadline passed are denied, and the denial is the tool's result; answers how many. */
export async function expireApprovals(ctx: RunContext, row: ResponseRow): Promise<number> {
  const { rows } = await ctx.kernel.db.query<{ call_id: string }>(
    `SELECT call_id FROM tool_calls WHERE response_id = $1 AND status = 'awaiting_approval' AND approval_deadline <= now() ORDER BY position`,
    [row.id],
  );
  for (const call of rows) {
    await commitOutput(ctx, call, denialOutput('No decision was made before the approval timed out.'), {
      decision: 'deny',
      reason: 'approval timed out',
      automatic: true,
    });
  }
  return rows.length;
}

export const denialOutput = (reason: string): string => JSON.stringify({ denied: true, reason });
