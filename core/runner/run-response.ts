// Runs one claimed response: model step after model step, each streamed into the
// journal and committed under the lease's fencing token, until a final answer.
import type { Item, ResponseError, Usage } from '../../generated/schemas.js';
import { getRevision } from '../agents/agents.js';
import { problemTypeUri, type ProblemSlug } from '../errors/problem-types.js';
import { appendEvent, LeaseLostError, type JournalWriter } from '../journal/journal.js';
import type { Kernel } from '../kernel.js';
import { ModelProviderError, type ModelEvent } from '../models/model-port.js';
import { requireResponse, responseView, type ResponseRow } from '../responses/responses.js';
import { terminalEventType, type TERMINAL_STATUSES } from '../responses/status.js';
import { appendSessionItems } from '../sessions/sessions.js';
import type { Claim } from './claim.js';
import { conversationFor } from './conversation.js';
import { StepStream } from './step-stream.js';

type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

const ZERO_USAGE: Usage = {
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

export const responseError = (slug: ProblemSlug, message: string, providerStatus?: number): ResponseError => ({
  code: slug,
  message,
  type: problemTypeUri(slug),
  ...(providerStatus !== undefined ? { provider_status: providerStatus } : {}),
});

interface Progress {
  output: Item[];
  usage: Usage;
  modelCalls: number;
}

export async function runResponse(kernel: Kernel, claim: Claim, signal: AbortSignal): Promise<void> {
  const { db } = kernel;
  const writer: JournalWriter = { projectId: claim.projectId, responseId: claim.responseId, leaseToken: claim.leaseToken };
  const row = await requireResponse(db, claim.projectId, claim.responseId);
  if (claim.previousStatus === 'queued') {
    await appendEvent(db, writer, 'response.in_progress', { response: responseView(row) });
  }
  const { spec } = await getRevision(db, row.agent_revision_id);
  const model = spec.model!;
  const instructions = [spec.instructions, row.instructions].filter(Boolean).join('\n\n') || null;
  const progress: Progress = { output: row.output, usage: row.usage ?? ZERO_USAGE, modelCalls: row.model_calls };

  const stream = new StepStream(db, writer, progress.output.length);
  const toolCalls: string[] = [];
  try {
    const adapter = kernel.models.get(model.provider);
    const items = await conversationFor(db, { ...row, output: progress.output });
    for await (const event of adapter.stream({ model, instructions, items, tools: [], stepIndex: progress.modelCalls, signal })) {
      switch (event.type) {
        case 'text_delta':
          await stream.textDelta(event.text);
          break;
        case 'tool_call':
          await stream.toolCall(event.callId, event.name, event.arguments);
          toolCalls.push(event.name);
          break;
        case 'usage':
          progress.usage = addUsage(progress.usage, event);
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
    if (error instanceof LeaseLostError) throw error;
    await stream.abandon().catch(() => undefined);
    if (signal.aborted) throw error;
    if (!(error instanceof ModelProviderError)) throw error;
    progress.output = [...progress.output, ...stream.items];
    const message = `${error.provider}: ${error.message}`;
    return finish(kernel, writer, row, { ...progress, modelCalls: progress.modelCalls + 1 }, 'failed', responseError('model-provider-error', message, error.providerStatus));
  }
  progress.output = [...progress.output, ...stream.items];
  progress.modelCalls += 1;
  if (toolCalls.length === 0) return finish(kernel, writer, row, progress, 'completed', null);
  // Tool execution belongs to the tool broker; this build has none, so the run ends here.
  return finish(kernel, writer, row, progress, 'failed', responseError('tool-unavailable', `The model called tool "${toolCalls[0]}", which this deployment cannot run.`));
}

/** Commits the terminal state, the session's new items and the one terminal event together. */
async function finish(kernel: Kernel, writer: JournalWriter, row: ResponseRow, progress: Progress, status: TerminalStatus, error: ResponseError | null): Promise<void> {
  await kernel.db.transaction(async (tx) => {
    const { rowCount } = await tx.query(
      `UPDATE responses SET status = $3, output = $4, usage = $5, error = $6, model_calls = $7, completed_at = now(),
         lease_owner = NULL, lease_expires_at = NULL
       WHERE id = $1 AND lease_token = $2`,
      [row.id, writer.leaseToken, status, JSON.stringify(progress.output), JSON.stringify(progress.usage), error && JSON.stringify(error), progress.modelCalls],
    );
    if (rowCount === 0) throw new LeaseLostError(row.id);
    if (row.session_id) {
      const newItems = progress.output.slice(row.output.length).filter((item) => item.status !== 'incomplete');
      await appendSessionItems(tx, row.project_id, row.session_id, row.id, newItems);
    }
    const final = await requireResponse(tx, row.project_id, row.id);
    await appendEvent(tx, writer, terminalEventType(status), { response: responseView(final) });
  });
  kernel.logger.info({ response_id: row.id, status, error_code: error?.code }, 'response finished');
}

/** A run that threw something unexpected ends failed instead of being retried forever. */
export async function failRun(kernel: Kernel, claim: Claim): Promise<void> {
  const writer: JournalWriter = { projectId: claim.projectId, responseId: claim.responseId, leaseToken: claim.leaseToken };
  const row = await requireResponse(kernel.db, claim.projectId, claim.responseId);
  const progress: Progress = { output: row.output, usage: row.usage ?? ZERO_USAGE, modelCalls: row.model_calls };
  await finish(kernel, writer, row, progress, 'failed', responseError('internal', 'The run stopped on an internal error; see the server log.'));
}
