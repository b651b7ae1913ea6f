// Runs one claimed response: check stops and limits, run the tool calls that may
// run, park the response when it waits for someone, otherwise take a model step —
// each result committed under the lease's fencing token before the next step reads it.
import type { AgentSpecFields, Item, ResponseError, Usage } from '../../generated/schemas.js';
import { getRevision } from '../agents/agents.js';
import { problemTypeUri, type ProblemSlug } from '../errors/problem-types.js';
import { appendEvent, LeaseLostError, type JournalWriter } from '../journal/journal.js';
import type { Kernel } from '../kernel.js';
import type { Logger } from '../logger.js';
import { ModelProviderError, type ModelAdapter, type ModelEvent } from '../models/model-port.js';
import { resolveModel, type ResolvedModel } from '../models/resolve.js';
import { PalaiError } from '../errors/palai-error.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { requireResponse, responseView, type ResponseRow } from '../responses/responses.js';
import { enterWaiting, finishResponse, waitingStatusFor, type TerminalStatus } from '../responses/state.js';
import type { ResponseStatus } from '../responses/status.js';
import { argumentProblems, needsApproval, resolveTools } from '../tools/broker.js';
import { insertToolCalls, openToolCalls, type NewToolCall } from '../tools/tool-calls.js';
import type { ResolvedTool } from '../tools/tool-port.js';
import type { Claim } from './claim.js';
import { conversationFor } from './conversation.js';
import { interruptReason } from './interrupt.js';
import { outputViolations, repairRequest } from './output-contract.js';
import { closeDanglingItems } from './recovery.js';
import { StepStream } from './step-stream.js';
import { executeToolCall, expireApprovals } from './tool-execution.js';

export const ZERO_USAGE: Usage = {
  input_tokens: 0,
  output_tokens: 0,
  total_tokens: 0,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens_details: { reasoning_tokens: 0 },
};

function addUsage(total: Usage, event: Extract<ModelEvent, { type: 'usage' }>): Usage {
  const input = total.input_tokens + event.inputTokens;
  const output = total.output_tokens + event.outputTokens;
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    input_tokens_details: { cached_tokens: total.input_tokens_details.cached_tokens + event.cachedTokens },
    output_tokens_details: total.output_tokens_details,
  };
}

function addUsages(total: Usage | null, step: Usage): Usage {
  const base = total ?? ZERO_USAGE;
  return {
    input_tokens: base.input_tokens + step.input_tokens,
    output_tokens: base.output_tokens + step.output_tokens,
    total_tokens: base.total_tokens + step.total_tokens,
    input_tokens_details: { cached_tokens: base.input_tokens_details.cached_tokens + step.input_tokens_details.cached_tokens },
    output_tokens_details: { reasoning_tokens: base.output_tokens_details.reasoning_tokens + step.output_tokens_details.reasoning_tokens },
  };
}

export const responseError = (slug: ProblemSlug, message: string, providerStatus?: number): ResponseError => ({
  code: slug,
  message,
  type: problemTypeUri(slug),
  ...(providerStatus !== undefined ? { provider_status: providerStatus } : {}),
});

export interface RunContext {
  kernel: Kernel;
  writer: JournalWriter;
  spec: AgentSpecFields;
  tools: Map<string, ResolvedTool>;
  signal: AbortSignal;
  log: Logger;
}

/** Ends the response; `stream` carries a cut-off step's items and held events. */
async function end(ctx: RunContext, status: TerminalStatus, error: ResponseError | null, stream?: StepStream, usage?: Usage): Promise<void> {
  await ctx.kernel.db.transaction(async (tx) => {
    const row = await requireResponse(tx, ctx.writer.projectId, ctx.writer.responseId, true);
    if (row.lease_token !== ctx.writer.leaseToken) throw new LeaseLostError(row.id);
    await stream?.flush(tx);
    const output = [...row.output, ...(stream?.items ?? [])];
    await finishResponse(tx, ctx.writer, { status, output, usage: usage ?? row.usage, error });
  });
  ctx.kernel.metrics.responsesFinished.inc({ status });
  ctx.log.info({ status, error_code: error?.code }, 'response finished');
}

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
    await appendEvent(db, writer, 'response.in_progress', { response: responseView(first) });
  }
  const { spec } = await getRevision(db, first.agent_revision_id);
  const ctx: RunContext = { kernel, writer, spec, tools: resolveTools(spec, { egressAllowHosts: kernel.config.egressAllowHosts }), signal, log };

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

const deadlineError = (spec: AgentSpecFields): ResponseError =>
  responseError('limit-exceeded', `The agent's timeout of ${spec.limits?.timeout_seconds}s passed.`);

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
      if (waiting) return db.transaction((tx) => enterWaiting(tx, writer, waiting));
      continue;
    }

    const maxSteps = spec.limits?.max_steps;
    if (maxSteps !== undefined && row.model_calls >= maxSteps) {
      return end(ctx, 'failed', responseError('limit-exceeded', `The agent reached max_steps (${maxSteps}) without a final answer.`));
    }
    const step = await modelStep(ctx, row);
    if (step === null) return;
    if (step.calls.length > 0) continue;

    if (spec.output_schema) {
      const violations = outputViolations(spec.output_schema, step.text);
      if (violations.length > 0) {
        if (row.repair_attempts === 0) {
          await requestRepair(ctx, step.text, violations);
          continue;
        }
        return end(ctx, 'failed', responseError('output-invalid', `The output does not satisfy the agent's output_schema: ${violations.join('; ')}`));
      }
    }
    return end(ctx, 'completed', null);
  }
}

interface StepResult {
  calls: StepStream['calls'];
  text: string;
}

/** Exponential backoff with full jitter, capped; a provider's retry-after wins when it sent one. */
function retryDelay(ctx: RunContext, attempt: number, error: ModelProviderError): number {
  if (error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, MAX_RETRY_DELAY_MS);
  const ceiling = Math.min(MAX_RETRY_DELAY_MS, ctx.kernel.config.modelRetryBaseMs * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

const MAX_RETRY_DELAY_MS = 30_000;

/**
 * One model step: resolve the model, call it, and on a retryable failure (429,
 * 5xx, timeout, broken stream) close what it streamed as incomplete and call
 * again into a new item. Null when the run ended inside the step.
 */
async function modelStep(ctx: RunContext, first: ResponseRow): Promise<StepResult | null> {
  const { kernel, spec, writer } = ctx;
  let resolved: ResolvedModel;
  let adapter: ModelAdapter;
  try {
    resolved = await resolveModel(kernel.db, kernel.secrets, writer.projectId, spec.model!, process.env, kernel.config);
    adapter = kernel.models.get(resolved.provider);
  } catch (error) {
    if (!(error instanceof PalaiError || error instanceof ModelProviderError)) throw error;
    await end(ctx, 'failed', responseError('model-provider-error', error.message));
    return null;
  }
  let row = first;
  for (let attempt = 0; ; attempt++) {
    const outcome = await modelAttempt(ctx, row, resolved, adapter);
    if (!(outcome instanceof ModelProviderError)) return outcome;
    if (!outcome.retryable || attempt >= kernel.config.modelMaxRetries) {
      const message = redactKey(`${outcome.provider}: ${outcome.message}`, resolved.credentials.apiKey);
      await end(ctx, 'failed', responseError('model-provider-error', message, outcome.providerStatus));
      return null;
    }
    const delay = retryDelay(ctx, attempt, outcome);
    ctx.log.warn({ provider: outcome.provider, status: outcome.providerStatus, attempt: attempt + 1, delay_ms: Math.round(delay) }, 'model call failed; retrying');
    await sleep(delay, undefined, { signal: ctx.signal });
    row = await requireResponse(kernel.db, writer.projectId, writer.responseId);
  }
}

const redactKey = (text: string, key: string | null): string => (key && key.length >= 4 ? text.split(key).join('[redacted]') : text);

/** One call to the model. A failed call's streamed item is committed as incomplete before the error is returned. */
async function modelAttempt(ctx: RunContext, row: ResponseRow, resolved: ResolvedModel, adapter: ModelAdapter): Promise<StepResult | ModelProviderError | null> {
  const { kernel, writer, spec, signal } = ctx;
  const model = spec.model!;
  const stream = new StepStream(kernel.db, writer, row.output.length, adapter.coalesceDeltas !== false);
  const stepTimer = kernel.metrics.stepLatency.startTimer({ provider: resolved.provider });
  let usage = ZERO_USAGE;
  try {
    const conversation = await conversationFor(kernel.db, row);
    const instructions = [spec.instructions, row.instructions].filter(Boolean).join('\n\n') || null;
    const tools = [...ctx.tools.values()].map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
    const events = adapter.stream({
      model,
      modelName: resolved.modelName,
      credentials: resolved.credentials,
      instructions,
      items: conversation.items,
      tools,
      outputSchema: spec.output_schema,
      maxOutputTokens: model.max_output_tokens,
      temperature: model.temperature,
      stepIndex: conversation.earlierModelCalls + row.model_attempts,
      signal,
    });
    for await (const event of events) {
      switch (event.type) {
        case 'text_delta':
          await stream.textDelta(event.text);
          break;
        case 'tool_call':
          await stream.toolCall(event.callId, event.name, event.arguments);
          break;
        case 'usage':
          usage = addUsage(usage, event);
          break;
        case 'finish':
          break;
        default: {
          const unknown: never = event;
          throw new Error(`unknown model event ${JSON.stringify(unknown)}`);
        }
      }
    }
    await stream.finish();
  } catch (error) {
    await stream.interrupt();
    if (error instanceof LeaseLostError) throw error;
    const reason = interruptReason(signal);
    const total = addUsages(row.usage, usage);
    if (reason === 'cancel') return end(ctx, 'canceled', null, stream, total).then(() => null);
    if (reason === 'deadline') return end(ctx, 'timed_out', deadlineError(spec), stream, total).then(() => null);
    // Shutdown or a lost lease: the next owner closes the open item and retries the step.
    if (reason) throw error;
    if (!(error instanceof ModelProviderError)) throw error;
    await commitFailedAttempt(ctx, stream, usage);
    return error;
  }
  recordTokens(kernel, usage);

  const calls: NewToolCall[] = stream.calls.map((call) => {
    const tool = ctx.tools.get(call.name);
    const approval = tool !== undefined && needsApproval(spec, tool);
    return {
      callId: call.callId,
      itemId: call.itemId,
      name: call.name,
      kind: tool?.kind ?? 'unknown',
      arguments: call.arguments,
      risk: tool?.risk ?? 'read',
      status: approval ? 'awaiting_approval' : 'ready',
      approvalTimeoutSeconds: approval ? spec.approval?.timeout_seconds : undefined,
    };
  });
  await kernel.db.transaction(async (tx) => {
    const { rowCount } = await tx.query(
      `UPDATE responses SET output = output || $3::jsonb, usage = $4, step_usage = step_usage || $5::jsonb,
         model_calls = model_calls + 1, model_attempts = model_attempts + 1, tool_call_count = tool_call_count + $6
       WHERE id = $1 AND lease_token = $2`,
      [writer.responseId, writer.leaseToken, JSON.stringify(stream.items), JSON.stringify(addUsages(row.usage, usage)), JSON.stringify([usage]), calls.length],
    );
    if (rowCount === 0) throw new LeaseLostError(writer.responseId);
    await stream.flush(tx);
    await insertToolCalls(tx, writer.projectId, writer.responseId, calls);
  });
  stepTimer();
  return { calls: stream.calls, text: stream.text };
}

/** A failed call still counts (the fake script moves on) and its partial item is closed as incomplete. */
async function commitFailedAttempt(ctx: RunContext, stream: StepStream, usage: Usage): Promise<void> {
  recordTokens(ctx.kernel, usage);
  await ctx.kernel.db.transaction(async (tx) => {
    const { rowCount } = await tx.query(
      `UPDATE responses SET output = output || $3::jsonb, model_attempts = model_attempts + 1 WHERE id = $1 AND lease_token = $2`,
      [ctx.writer.responseId, ctx.writer.leaseToken, JSON.stringify(stream.items)],
    );
    if (rowCount === 0) throw new LeaseLostError(ctx.writer.responseId);
    await stream.flush(tx);
  });
}

function recordTokens(kernel: Kernel, usage: Usage): void {
  kernel.metrics.tokens.inc({ kind: 'input' }, usage.input_tokens);
  kernel.metrics.tokens.inc({ kind: 'output' }, usage.output_tokens);
  kernel.metrics.tokens.inc({ kind: 'cached' }, usage.input_tokens_details.cached_tokens);
}

/** Hides the invalid answer from the output text and asks the model once more, with the violations. */
async function requestRepair(ctx: RunContext, answer: string, violations: string[]): Promise<void> {
  await ctx.kernel.db.transaction(async (tx) => {
    const row = await requireResponse(tx, ctx.writer.projectId, ctx.writer.responseId, true);
    if (row.lease_token !== ctx.writer.leaseToken) throw new LeaseLostError(row.id);
    const last = row.output.at(-1);
    const answered = last?.type === 'message' && last.role === 'assistant';
    const output: Item[] = row.output.map((item, index) => (answered && index === row.output.length - 1 ? { ...item, status: 'incomplete' } : item));
    const kernelItems = [...row.kernel_items, { after: row.output.length, item: repairRequest(answer, violations) }];
    await tx.query('UPDATE responses SET output = $2, kernel_items = $3, repair_attempts = repair_attempts + 1 WHERE id = $1', [
      row.id,
      JSON.stringify(output),
      JSON.stringify(kernelItems),
    ]);
  });
  ctx.log.info({ violations }, 'output did not satisfy the schema; asking for a repair');
}

/** A run that threw something unexpected ends failed instead of being retried forever. */
export async function failRun(kernel: Kernel, claim: Claim): Promise<void> {
  const writer: JournalWriter = { projectId: claim.projectId, responseId: claim.responseId, leaseToken: claim.leaseToken };
  await kernel.db.transaction(async (tx) => {
    const row = await requireResponse(tx, claim.projectId, claim.responseId, true);
    if (row.lease_token !== claim.leaseToken) return;
    await finishResponse(tx, writer, {
      status: 'failed',
      output: row.output,
      usage: row.usage,
      error: responseError('internal', 'The run stopped on an internal error; see the server log.'),
    });
  });
}

export type { ResponseStatus };
