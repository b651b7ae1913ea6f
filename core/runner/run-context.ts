// What every part of a run shares: its context, how it ends, and usage arithmetic.
import type { AgentSpecFields, Item, ResponseError, Usage } from '../../generated/schemas.js';
import { problemTypeUri, type ProblemSlug } from '../errors/problem-types.js';
import type { JournalWriter, KernelEvent } from '../journal/journal.js';
import type { Kernel } from '../kernel.js';
import type { Logger } from '../logger.js';
import type { ConnectionRow } from '../models/connections.js';
import type { ModelEvent } from '../models/model-port.js';
import type { ResponseRow } from '../responses/responses.js';
import { finishAtOnce, type TerminalStatus } from '../responses/status-writer.js';
import type { ResolvedTool } from '../tools/tool-port.js';

export const ZERO_USAGE: Usage = {
  input_tokens: 0,
  output_tokens: 0,
  total_tokens: 0,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens_details: { reasoning_tokens: 0 },
};

export function addUsage(total: Usage, event: Extract<ModelEvent, { type: 'usage' }>): Usage {
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

export function addUsages(total: Usage | null, step: Usage): Usage {
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
  /** The row as the run left it when it ended or parked: what a caller waiting in this process answers with. */
  settled: ResponseRow | null;
  /** The response has no session (its row said so; a response never gains one). */
  sessionless: boolean;
  /** ClaimedRun's `connection`, until the first model step takes it: later steps read the connection as it is then. */
  admittedConnection?: ConnectionRow | null;
}

/** The model step a run ends with, whole or cut off: written by the statements that end the response. */
export interface LastStep {
  items: Item[];
  /** Its held events (and deltas no write took). */
  events: KernelEvent[];
  /** The run's usage, this step's included. */
  usage: Usage;
  /** Set when the step reached its end: it counts as a model call with this usage. */
  stepUsage?: Usage;
  /** Says the transaction that wrote it committed. */
  committed?(): void;
}

/** Ends the response; `last` (the step it ends with) commits with it, its events just before the terminal one. */
export async function end(ctx: RunContext, status: TerminalStatus, error: ResponseError | null, last?: LastStep): Promise<void> {
  const step = last && { events: last.events, usage: last.stepUsage };
  ctx.settled = await finishAtOnce(ctx.kernel.db, ctx.writer, {
    status,
    error,
    output: last?.items ?? [],
    usage: last?.usage,
    step,
    sessionless: ctx.sessionless,
  });
  last?.committed?.();
  ctx.kernel.metrics.responsesFinished.inc({ status });
  // A completed response is the common case, counted in palai_responses_finished_total: a line each is noise at info.
  if (status === 'completed') ctx.log.debug({ status }, 'response finished');
  else ctx.log.info({ status, error_code: error?.code }, 'response finished');
}

/** Whether the run's usage has passed its `max_total_tokens` (the agent's, or the narrower one its options ask). */
export const overTokenBudget = (spec: AgentSpecFields, usage: Usage | null): boolean =>
  spec.limits?.max_total_tokens !== undefined && (usage?.total_tokens ?? 0) > spec.limits.max_total_tokens;

export const tokenBudgetError = (spec: AgentSpecFields): ResponseError =>
  responseError('limit-exceeded', `The token budget of ${spec.limits?.max_total_tokens} was used up.`);

export const deadlineError = (spec: AgentSpecFields): ResponseError =>
  responseError('limit-exceeded', `The run's timeout of ${spec.limits?.timeout_seconds}s passed.`);
