// Runs one claimed response: check stops and limits, run the tool calls that may
// run, park the response when it waits for someone, otherwise take a model step —
// each result committed under the lease's fencing token before the next step reads it.
import type { AgentSpecFields, Item, ResponseError } from '../../generated/schemas.js';
import { getRevision } from '../agents/agents.js';
import { appendEvent, LeaseLostError, type JournalWriter } from '../journal/journal.js';
import { lockUnderLease } from '../responses/lease.js';
import type { Kernel } from '../kernel.js';
import { requireResponse, type ResponseRow } from '../responses/responses.js';
import { changeStatus, finishResponse, journalStatus, waitingStatusFor, type TerminalStatus } from '../responses/status-writer.js';
import { ToolResolutionError } from '../tools/tool-port.js';
import { openToolCalls } from '../tools/tool-calls.js';
import type { Claim } from './claim.js';
import { interruptReason } from './interrupt.js';
import { modelStep } from './model-step.js';
import { outputSchemaOf, outputViolations, repairRequest, runToolSpecs } from './output-contract.js';
import { closeDanglingItems } from './recovery.js';
import { deadlineError, end, responseError, type RunContext } from './run-context.js';
import { executeToolCall, expireApprovals } from './tool-execution.js';


/** The reason a response must stop before its next step, if any. */
function stopBefore(row: ResponseRow, spec: AgentSpecFields): { status: TerminalStatus; error: ResponseError | null } | null {
  const limits = spec.limits ?? {};
  if (row.cancel_requested_at) return { status: 'canceled', error: null };
  if (row.deadline_at && new Date(row.deadline_at).getTime() <= Date.now()) return { status: 'timed_out', error: deadlineError(spec) };
  if (limits.max_total_tokens !== undefined && (row.usage?.total_tokens ?? 0) > limits.max_total_tokens) {
    return { status: 'budget_exceeded', error: responseError('limit-exceeded', `The token budget of ${limits.max_total_tokens} was used up.`) };
  }
  if (limits.max_tool_calls !== undefined && row.tool_call_count > limits.max_tool_calls) {
    return { status: 'failed', error: responseError('limit-exceeded', `The model asked for more than max_tool_calls (${limits.max_tool_calls}) tool calls.`) };
  }
  return null;
}

export async function runResponse(kernel: Kernel, claim: Claim, signal: AbortSignal): Promise<void> {
  const { db } = kernel;
  const writer: JournalWriter = { projectId: claim.projectId, responseId: claim.responseId, leaseToken: claim.leaseToken };
  const log = kernel.logger.child({ response_id: claim.responseId });
  const first = await requireResponse(db, claim.projectId, claim.responseId);
  if (claim.takeover) {
    const closed = await closeDanglingItems(db, writer);
    if (closed > 0) log.warn({ closed }, 'closed output items a crashed worker left open');
  } else if (claim.previousStatus !== 'in_progress') {
    // The claim moved it to in_progress; announce that under the new lease.
    await db.transaction((tx) => journalStatus(tx, writer, first));
  }
  const { spec } = await getRevision(db, first.agent_revision_id);
  const ctx: RunContext = { kernel, writer, spec, tools: new Map(), signal, log };
  try {
    ctx.tools = await kernel.tools.resolveAll(runToolSpecs(spec, first.options), { projectId: claim.projectId, responseId: claim.responseId, egress: kernel.egress, signal });
    const chosen = first.options.tool_choice;
    if (typeof chosen === 'object' && !ctx.tools.has(chosen.name)) throw new ToolResolutionError(`tool_choice names ${JSON.stringify(chosen.name)}, which is not a tool of this run.`);
  } catch (error) {
    // A tool the agent names cannot be had (no provider of its kind here, a provider out of reach): say which.
    if (!(error instanceof ToolResolutionError)) throw error;
    return end(ctx, 'failed', responseError('invalid-request', error.message));
  }

  try {
    await runSteps(ctx, claim);
  } catch (error) {
    // Interrupted between model steps (a tool was running, say): same meaning as inside one.
    const reason = interruptReason(signal);
    if (reason === 'cancel') return end(ctx, 'canceled', null);
    if (reason === 'deadline') return end(ctx, 'timed_out', deadlineError(spec));
    throw error;
  }
}

async function runSteps(ctx: RunContext, claim: Claim): Promise<void> {
  const { kernel, spec, signal, writer } = ctx;
  const { db } = kernel;
  for (;;) {
    signal.throwIfAborted();
    const row = await requireResponse(db, claim.projectId, claim.responseId);
    const stop = stopBefore(row, spec);
    if (stop) return end(ctx, stop.status, stop.error);

    await expireApprovals(ctx, row);
    const open = await openToolCalls(db, row.id);
    if (open.length > 0) {
      await Promise.all(open.filter((c) => c.status === 'ready' || c.status === 'running').map((call) => executeToolCall(ctx, call)));
      const waiting = waitingStatusFor(await openToolCalls(db, row.id));
      if (waiting) return db.transaction(async (tx) => void (await changeStatus(tx, writer, { to: waiting })));
      continue;
    }

    const maxSteps = spec.limits?.max_steps;
    if (maxSteps !== undefined && row.model_calls >= maxSteps) {
      return end(ctx, 'failed', responseError('limit-exceeded', `The agent reached max_steps (${maxSteps}) without a final answer.`));
    }
    const step = await modelStep(ctx, row);
    if (step === null) return;
    if (step.calls.length > 0) continue;

    const schema = outputSchemaOf(spec, row.options);
    if (schema) {
      const violations = outputViolations(schema, step.text);
      if (violations.length > 0) {
        if (row.repair_attempts === 0) {
          await requestRepair(ctx, step.text, violations);
          continue;
        }
        return end(ctx, 'failed', responseError('output-invalid', `The output does not satisfy ${row.options.text_format ? "the request's text.format" : "the agent's output_schema"}: ${violations.join('; ')}`));
      }
    }
    return end(ctx, 'completed', null);
  }
}

/** Hides the invalid answer from the output text and asks the model once more, with the violations. */
async function requestRepair(ctx: RunContext, answer: string, violations: string[]): Promise<void> {
  await ctx.kernel.db.transaction(async (tx) => {
    const row = await lockUnderLease(tx, ctx.writer);
    const last = row.output.at(-1);
    const answered = last?.type === 'message' && last.role === 'assistant';
    const output: Item[] = row.output.map((item, index) => (answered && index === row.output.length - 1 ? { ...item, status: 'incomplete' } : item));
    const kernelItems = [...row.kernel_items, { after: row.output.length, item: repairRequest(answer, violations) }];
    await tx.query('UPDATE responses SET output = $2, kernel_items = $3, repair_attempts = repair_attempts + 1 WHERE id = $1', [
      row.id,
      JSON.stringify(output),
      JSON.stringify(kernelItems),
    ]);
    // The rejected answer leaves the output text: say so in the journal, as for any change of an item.
    if (answered) await appendEvent(tx, ctx.writer, { type: 'item.updated', output_index: output.length - 1, item: output.at(-1)! });
  });
  ctx.log.info({ violations }, 'output did not satisfy the schema; asking for a repair');
}

/** A run that threw something unexpected ends failed instead of being retried forever. */
export async function failRun(kernel: Kernel, claim: Claim): Promise<void> {
  const writer: JournalWriter = { projectId: claim.projectId, responseId: claim.responseId, leaseToken: claim.leaseToken };
  await kernel.db.transaction(async (tx) => {
    const row = await lockUnderLease(tx, writer).catch((error: unknown) => {
      if (error instanceof LeaseLostError) return null;
      throw error;
    });
    if (!row) return;
    await finishResponse(tx, writer, {
      status: 'failed',
      output: row.output,
      usage: row.usage,
      error: responseError('internal', 'The run stopped on an internal error; see the server log.'),
    });
  });
}

