// Runs one claimed response: check stops and limits, run the tool calls that may
// run, park the response when it waits for someone, otherwise take a model step —
// each result committed under the lease's fencing token before the next step reads it.
import type { AgentSpecFields, Item, ResponseError } from '../../generated/schemas.js';
import { allowedTools, DEFAULT_MAX_STEPS } from '../agents/effective-spec.js';
import { appendEvent, LeaseLostError, type JournalWriter } from '../journal/journal.js';
import { lockUnderLease } from '../responses/lease.js';
import type { Kernel } from '../kernel.js';
import { RESPONSE_COLUMNS, RESPONSE_JOIN, type ResponseRow } from '../responses/responses.js';
import { recordRepairRequest } from '../responses/run-output.js';
import { finishAtOnce, waitingStatusFor, type TerminalStatus } from '../responses/status-writer.js';
import type { Queryable } from '../store/db.js';
import { ToolResolutionError } from '../tools/tool-port.js';
import { openToolCalls } from '../tools/tool-calls.js';
import { OPEN_CALLS, type Claim, type ClaimedRun, type RunRow } from './claim.js';
import { interruptReason } from './interrupt.js';
import { modelStep, type StepResult } from './model-step.js';
import { outputSchemaOf, outputViolations, repairRequest, runToolSpecs } from './output-contract.js';
import { closeDanglingItems } from './recovery.js';
import { deadlineError, end, overTokenBudget, responseError, tokenBudgetError, type RunContext } from './run-context.js';
import { endDueParkedCalls, parkResponse } from './parked-waits.js';
import { executeToolCall, expireApprovals } from './tool-execution.js';

/** The reason a response must stop before its next step, if any. */
function stopBefore(row: ResponseRow, spec: AgentSpecFields): { status: TerminalStatus; error: ResponseError | null } | null {
  const limits = spec.limits ?? {};
  if (row.cancel_requested_at) return { status: 'canceled', error: null };
  if (row.deadline_at && new Date(row.deadline_at).getTime() <= Date.now()) return { status: 'timed_out', error: deadlineError(spec) };
  if (overTokenBudget(spec, row.usage)) return { status: 'budget_exceeded', error: tokenBudgetError(spec) };
  if (limits.max_tool_calls !== undefined && row.tool_call_count > limits.max_tool_calls) {
    return { status: 'failed', error: responseError('limit-exceeded', `The model asked for more than max_tool_calls (${limits.max_tool_calls}) tool calls.`) };
  }
  return null;
}

/** A response's row as a run reads it between steps. */
async function readRunRow(db: Queryable, writer: JournalWriter): Promise<RunRow> {
  const { rows } = await db.query<RunRow>(
    `SELECT ${RESPONSE_COLUMNS}, ${OPEN_CALLS} FROM responses r, agents a, agent_revisions rev WHERE r.id = $1 AND ${RESPONSE_JOIN}`,
    [writer.responseId],
  );
  if (!rows[0]) throw new LeaseLostError(writer.responseId);
  return rows[0];
}

/**
 * Runs a claimed response from the row and spec its claim returned. Resolves
 * with the row it ended or parked with, or null when it stopped without either
 * (handed back, or the lease lost).
 */
export async function runResponse(kernel: Kernel, run: ClaimedRun, signal: AbortSignal): Promise<ResponseRow | null> {
  const { claim, row: first, spec } = run;
  const writer: JournalWriter = { projectId: claim.projectId, responseId: claim.responseId, leaseToken: claim.leaseToken };
  const log = kernel.logger.child({ response_id: claim.responseId });
  let firstRow: RunRow | null = first;
  if (claim.takeover) {
    const closed = await closeDanglingItems(kernel.db, writer);
    if (closed > 0) {
      log.warn({ closed }, 'closed output items a crashed worker left open');
      firstRow = null;
    }
  }
  const ctx: RunContext = {
    kernel,
    writer,
    spec,
    tools: new Map(),
    signal,
    log,
    settled: null,
    sessionless: first.session_id === null,
    admittedConnection: run.connection,
  };
  try {
    const resolved = await kernel.tools.resolveAll(runToolSpecs(spec, first.options), {
      projectId: claim.projectId,
      responseId: claim.responseId,
      egress: kernel.egress,
      signal,
    });
    // A tool allowed_tools leaves out is not offered, and a call of it is one of a tool the run does not have.
    ctx.tools = allowedTools(resolved, first.options);
    const chosen = first.options.tool_choice;
    if (typeof chosen === 'object' && !ctx.tools.has(chosen.name))
      throw new ToolResolutionError(`tool_choice names ${JSON.stringify(chosen.name)}, which is not a tool of this run.`);
  } catch (error) {
    // A tool the agent names cannot be had (no provider of its kind here, a provider out of reach): say which.
    if (!(error instanceof ToolResolutionError)) throw error;
    await end(ctx, 'failed', responseError('invalid-request', error.message));
    return ctx.settled;
  }

  try {
    await runSteps(ctx, firstRow);
  } catch (error) {
    // Interrupted between model steps (a tool was running, say): same meaning as inside one.
    const reason = interruptReason(signal);
    if (reason === 'cancel') await end(ctx, 'canceled', null);
    else if (reason === 'deadline') await end(ctx, 'timed_out', deadlineError(spec));
    else throw error;
  }
  return ctx.settled;
}

/** Each pass reads the row (the claim's, first), then runs what may run, parks, or takes a model step. */
async function runSteps(ctx: RunContext, first: RunRow | null): Promise<void> {
  const { kernel, spec, signal, writer } = ctx;
  const { db } = kernel;
  let next = first;
  for (;;) {
    signal.throwIfAborted();
    const row = next ?? (await readRunRow(db, writer));
    next = null;
    const stop = stopBefore(row, spec);
    if (stop) return end(ctx, stop.status, stop.error);

    if (row.open_calls > 0) {
      // Denied approvals change the output: read it again before anything else.
      if ((await expireApprovals(ctx, row)) > 0) continue;
      const open = await openToolCalls(db, row.id);
      if (open.length > 0) {
        // Parked calls answered meanwhile, or past their deadline, change the output too.
        if ((await endDueParkedCalls(ctx, open)) > 0) continue;
        await Promise.all(open.filter((c) => c.status === 'ready' || c.status === 'running').map((call) => executeToolCall(ctx, call)));
        const left = await openToolCalls(db, row.id);
        const waiting = waitingStatusFor(left);
        if (waiting) {
          ctx.settled = await parkResponse(ctx, waiting, left);
          if (ctx.settled) return;
        }
        continue;
      }
    }

    // Without a limit of its own, a run whose model never stops calling tools still ends.
    const maxSteps = spec.limits?.max_steps ?? DEFAULT_MAX_STEPS;
    if (row.model_calls >= maxSteps) {
      return end(ctx, 'failed', responseError('limit-exceeded', `The agent reached max_steps (${maxSteps}) without a final answer.`));
    }
    const step = await modelStep(ctx, row);
    if (step === null) return;
    if (step.calls.length > 0) {
      // Over the token budget, the calls are committed but never run: the next pass stops before them.
      await db.transaction((tx) => step.write(tx));
      step.committed();
      continue;
    }
    // The answer that takes the run over its budget is kept, but the run does not complete with it.
    if (overTokenBudget(spec, step.usage)) return end(ctx, 'budget_exceeded', tokenBudgetError(spec), step.last());

    // The last step commits with the end of the response (or with the repair request): one transaction, not two.
    const schema = outputSchemaOf(spec, row.options);
    const violations = schema ? outputViolations(schema, step.text) : [];
    if (violations.length > 0) {
      if (row.repair_attempts === 0) {
        await requestRepair(ctx, step, violations);
        continue;
      }
      return end(
        ctx,
        'failed',
        responseError(
          'output-invalid',
          `The output does not satisfy ${row.options.text_format ? "the request's text.format" : "the agent's output_schema"}: ${violations.join('; ')}`,
        ),
        step.last(),
      );
    }
    return end(ctx, 'completed', null, step.last());
  }
}

/** Commits the step, hides its invalid answer from the output text and asks the model once more, with the violations. */
async function requestRepair(ctx: RunContext, step: StepResult, violations: string[]): Promise<void> {
  await ctx.kernel.db.transaction(async (tx) => {
    await step.write(tx);
    const row = await lockUnderLease(tx, ctx.writer);
    const last = row.output.at(-1);
    const answered = last?.type === 'message' && last.role === 'assistant';
    const output: Item[] = row.output.map((item, index) => (answered && index === row.output.length - 1 ? { ...item, status: 'incomplete' } : item));
    const kernelItems = [...row.kernel_items, { after: row.output.length, item: repairRequest(step.text, violations) }];
    await recordRepairRequest(tx, row.id, output, kernelItems);
    // The rejected answer leaves the output text: say so in the journal, as for any change of an item.
    if (answered) await appendEvent(tx, ctx.writer, { type: 'item.updated', output_index: output.length - 1, item: output.at(-1)! });
  });
  step.committed();
  ctx.log.info({ violations }, 'output did not satisfy the schema; asking for a repair');
}

/** A run that threw something unexpected ends failed instead of being retried forever. */
export async function failRun(kernel: Kernel, claim: Claim): Promise<ResponseRow | null> {
  const writer: JournalWriter = { projectId: claim.projectId, responseId: claim.responseId, leaseToken: claim.leaseToken };
  const error = responseError('internal', 'The run stopped on an internal error; see the server log.');
  return finishAtOnce(kernel.db, writer, { status: 'failed', output: [], error }).catch((failure: unknown) => {
    if (failure instanceof LeaseLostError) return null;
    throw failure;
  });
}
