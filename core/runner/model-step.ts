// One model step: resolve the model, call it, stream its answer into the journal
// and commit it; retry a failed call (429, 5xx, timeout, broken stream) as a
// fresh call into a new item, after closing what it streamed as incomplete.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Usage } from '../../generated/schemas.js';
import { PalaiError } from '../errors/palai-error.js';
import { storableText } from '../json.js';
import { LeaseLostError, type JournalWriter } from '../journal/journal.js';
import type { Kernel } from '../kernel.js';
import { ModelProviderError, type ModelAdapter, type ModelRequest } from '../models/model-port.js';
import type { Queryable } from '../store/db.js';
import { resolveModel, type ResolvedModel } from '../models/resolve.js';
import { requireResponse, type ResponseRow, type StoredRunOptions } from '../responses/responses.js';
import { appendOutputItems } from '../responses/output-items.js';
import { addStepOutput } from '../responses/run-output.js';
import { needsApproval, parsedArguments } from '../tools/broker.js';
import { insertToolCalls, type NewToolCall } from '../tools/tool-calls.js';
import { conversationFor } from './conversation.js';
import { gateCalls } from './gated-calls.js';
import { interruptReason } from './interrupt.js';
import { addUsage, addUsages, deadlineError, end, responseError, ZERO_USAGE, type LastStep, type RunContext } from './run-context.js';
import { StepStream } from './step-stream.js';
import { outputSchemaOf } from './output-contract.js';

/** A model step that streamed to its end, not yet committed: the run decides what commits with it. */
export interface StepResult {
  calls: StepStream['calls'];
  text: string;
  /** The run's usage with this step's, as its provider reported it. */
  usage: Usage;
  /** Commits the step's output, usage and tool calls in the caller's transaction, under the lease. */
  write(tx: Queryable): Promise<void>;
  /** Says the transaction that wrote the step committed (the step's latency ends there). */
  committed(): void;
  /** The step as the last one of the run, for the transaction that ends the response to write instead. */
  last(): LastStep;
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
export async function modelStep(ctx: RunContext, first: ResponseRow): Promise<StepResult | null> {
  const { kernel, spec, writer } = ctx;
  const read = ctx.admittedConnection;
  ctx.admittedConnection = undefined;
  let resolved: ResolvedModel;
  let adapter: ModelAdapter;
  try {
    resolved = await resolveModel(kernel.db, kernel.secrets, writer.projectId, spec.model!, kernel.config, read);
    adapter = kernel.models.get(resolved.provider);
  } catch (error) {
    if (!(error instanceof PalaiError || error instanceof ModelProviderError)) throw error;
    await end(ctx, 'failed', responseError('model-provider-error', error.message));
    return null;
  }
  let row = first;
  for (let attempt = 0; ; attempt++) {
    const outcome = await modelAttempt(ctx, row, resolved, adapter);
    if (outcome instanceof PalaiError) {
      // The egress guard refused the destination: asking again would be refused again.
      await end(ctx, 'failed', responseError(outcome.slug, outcome.message));
      return null;
    }
    if (!(outcome instanceof ModelProviderError)) return outcome;
    if (!outcome.retryable || attempt >= kernel.config.modelMaxRetries) {
      const message = redactKey(`${outcome.provider}: ${outcome.message}`, resolved.credentials.apiKey);
      await end(ctx, 'failed', responseError('model-provider-error', message, outcome.providerStatus));
      return null;
    }
    const delay = retryDelay(ctx, attempt, outcome);
    ctx.log.warn(
      { provider: outcome.provider, status: outcome.providerStatus, attempt: attempt + 1, delay_ms: Math.round(delay) },
      'model call failed; retrying',
    );
    await sleep(delay, undefined, { signal: ctx.signal });
    row = await requireResponse(kernel.db, writer.projectId, writer.responseId);
  }
}

/** The run's tool choice in the model port's terms. */
function toolChoiceOf(choice: StoredRunOptions['tool_choice']): ModelRequest['toolChoice'] {
  return typeof choice === 'object' ? { name: choice.name } : choice;
}

const redactKey = (text: string, key: string | null): string => (key && key.length >= 4 ? text.split(key).join('[redacted]') : text);

/**
 * One call to the model. A failed call's streamed item is committed as incomplete
 * before the error is returned: the provider's, or the transport's egress refusal.
 */
async function modelAttempt(
  ctx: RunContext,
  row: ResponseRow,
  resolved: ResolvedModel,
  adapter: ModelAdapter,
): Promise<StepResult | ModelProviderError | PalaiError | null> {
  const { kernel, writer, spec, signal } = ctx;
  const model = spec.model!;
  const stream = new StepStream(kernel.db, writer, row.output.length, adapter.coalesceDeltas !== false);
  const stepTimer = kernel.metrics.stepLatency.startTimer({ provider: resolved.provider });
  let usage = ZERO_USAGE;
  try {
    const conversation = await conversationFor(kernel.db, row);
    const items = kernel.secretMarkers ? await kernel.secretMarkers.reveal(kernel.db, row.project_id, row.id, conversation.items) : conversation.items;
    const instructions = [spec.instructions, row.instructions].filter(Boolean).join('\n\n') || null;
    const tools = [...ctx.tools.values()].map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
    const events = adapter.stream({
      model,
      modelName: resolved.modelName,
      credentials: resolved.credentials,
      transport: kernel.egress,
      instructions,
      items,
      tools,
      outputSchema: outputSchemaOf(spec, row.options),
      // The request's own settings win over the agent's.
      maxOutputTokens: row.options.max_output_tokens ?? model.max_output_tokens,
      temperature: row.options.temperature ?? model.temperature,
      topP: row.options.top_p,
      toolChoice: toolChoiceOf(row.options.tool_choice),
      parallelToolCalls: row.options.parallel_tool_calls,
      responseId: row.id,
      stepIndex: conversation.earlierModelTurns + row.model_attempts,
      metadata: row.metadata,
      signal,
    });
    for await (const event of events) {
      switch (event.type) {
        // What a provider streams is stored as it came, but for characters PostgreSQL cannot hold.
        case 'text_delta':
          await stream.textDelta(storableText(event.text));
          break;
        case 'tool_call': {
          // A call of a function tool is the caller's to run; any other (built-in, MCP, HTTP, agent, or a name
          // the run has no tool for, which Palai answers itself) Palai runs.
          const server = ctx.tools.get(event.name)?.kind !== 'function';
          await stream.toolCall(storableText(event.callId), storableText(event.name), storableText(event.arguments), server);
          break;
        }
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
    const cutOff = (): LastStep => ({ items: stream.items, events: stream.takeHeld(), usage: total });
    if (reason === 'cancel') return end(ctx, 'canceled', null, cutOff()).then(() => null);
    if (reason === 'deadline') return end(ctx, 'timed_out', deadlineError(spec), cutOff()).then(() => null);
    // Shutdown or a lost lease: the next owner closes the open item and retries the step.
    if (reason) throw error;
    // A PalaiError out of an adapter is the transport's: its egress guard refused the call.
    if (!(error instanceof ModelProviderError || error instanceof PalaiError)) throw error;
    await commitFailedAttempt(ctx, stream, usage);
    return error;
  }
  recordTokens(kernel, usage);

  const calls: NewToolCall[] = stream.calls.map((call) => {
    const tool = ctx.tools.get(call.name);
    const parsed = tool?.approvalOf || tool?.approvalDisplay ? parsedArguments(call.arguments) : undefined;
    const approval = tool !== undefined && needsApproval(spec, tool, parsed);
    const display = approval && tool?.approvalDisplay && parsed !== undefined ? tool.approvalDisplay(parsed) : undefined;
    return {
      callId: call.callId,
      itemId: call.itemId,
      name: call.name,
      kind: tool?.kind ?? 'unknown',
      arguments: call.arguments,
      risk: tool?.risk ?? 'read',
      status: approval ? 'awaiting_approval' : 'ready',
      approvalTimeoutSeconds: approval ? spec.approval?.timeout_seconds : undefined,
      ...(display ? { approvalDisplay: display } : {}),
    };
  });
  const total = addUsages(row.usage, usage);
  return {
    calls: stream.calls,
    text: stream.text,
    usage: total,
    async write(tx) {
      // A wake's calls pass its objective's gate; every other run's go in as they are. The gate locks the
      // objective's row before this writes the response's, the order every other writer of both keeps (a
      // pause locks the objective, then cancels its wakes), so the two never wait on each other in a cycle.
      const objective = calls.length > 0 ? row.options.objective : undefined;
      const gated = objective === undefined ? null : await gateCalls(ctx, tx, objective, calls);
      await writeStep(tx, writer, stream, { usage: total, stepUsage: usage, attempted: true, calls: calls.length });
      if (calls.length === 0) return;
      if (gated === null) return insertToolCalls(tx, writer.projectId, writer.responseId, calls);
      await insertToolCalls(tx, writer.projectId, writer.responseId, gated.calls);
      await appendOutputItems(tx, writer, gated.refused);
    },
    committed: () => void stepTimer(),
    last: () => ({ items: stream.items, events: stream.takeHeld(), usage: total, stepUsage: usage, committed: () => void stepTimer() }),
  };
}

/**
 * Adds a step's items to the output and journals its held events, under the
 * lease (the UPDATE fails to match, and so writes nothing, when the token is
 * stale). A step that reached its end (`stepUsage`) counts as a model call; a
 * call the provider failed counts as an attempt only; a step cut off as neither.
 */
async function writeStep(
  tx: Queryable,
  writer: JournalWriter,
  stream: StepStream,
  step: { usage?: Usage; stepUsage?: Usage; attempted: boolean; calls?: number },
): Promise<void> {
  const counted = step.stepUsage !== undefined;
  await addStepOutput(tx, writer, {
    items: stream.items,
    usage: step.usage ?? null,
    stepUsage: step.stepUsage ?? null,
    modelCalls: counted ? 1 : 0,
    modelAttempts: step.attempted ? 1 : 0,
    toolCalls: step.calls ?? 0,
  });
  await stream.flush(tx);
}

/** A failed call still counts (the fake script moves on) and its partial item is closed as incomplete. */
async function commitFailedAttempt(ctx: RunContext, stream: StepStream, usage: Usage): Promise<void> {
  recordTokens(ctx.kernel, usage);
  await ctx.kernel.db.transaction((tx) => writeStep(tx, ctx.writer, stream, { attempted: true }));
}

function recordTokens(kernel: Kernel, usage: Usage): void {
  kernel.metrics.tokens.inc({ kind: 'input' }, usage.input_tokens);
  kernel.metrics.tokens.inc({ kind: 'output' }, usage.output_tokens);
  kernel.metrics.tokens.inc({ kind: 'cached' }, usage.input_tokens_details.cached_tokens);
}
