// What every part of a run shares: its context, how it ends, and usage arithmetic.
import type { AgentSpecFields, ResponseError, Usage } from '../../generated/schemas.js';
import { problemTypeUri, type ProblemSlug } from '../errors/problem-types.js';
import type { JournalWriter } from '../journal/journal.js';
import type { Kernel } from '../kernel.js';
import type { Logger } from '../logger.js';
import type { ModelEvent } from '../models/model-port.js';
import { lockUnderLease } from '../responses/lease.js';
import { finishResponse, type TerminalStatus } from '../responses/status-writer.js';
import type { ResolvedTool } from '../tools/tool-port.js';
import type { StepStream } from './step-stream.js';

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
}

/** Ends the response; `stream` carries a cut-off step's items and held events. */
export async function end(ctx: RunContext, status: TerminalStatus, error: ResponseError | null, stream?: StepStream, usage?: Usage): Promise<void> {
  await ctx.kernel.db.transaction(async (tx) => {
    const row = await lockUnderLease(tx, ctx.writer);
    await stream?.flush(tx);
    const output = [...row.output, ...(stream?.items ?? [])];
    await finishResponse(tx, ctx.writer, { status, output, usage: usage ?? row.usage, error });
  });
  ctx.kernel.metrics.responsesFinished.inc({ status });
  ctx.log.info({ status, error_code: error?.code }, 'response finished');
}

export const deadlineError = (spec: AgentSpecFields): ResponseError =>
  responseError('limit-exceeded', `The agent's timeout of ${spec.limits?.timeout_seconds}s passed.`);

