// A run's writes to its response's output, as a run goes: a model step's items
// with its usage and counts (under the lease), the items a dead worker left
// open, closed on takeover, and an answer set aside to ask for its repair.
import type { Item, Usage } from '../../generated/schemas.js';
import { LeaseLostError, type JournalWriter } from '../journal/journal.js';
import type { Queryable } from '../store/db.js';
import type { ResponseRow } from './responses.js';

/** What one model step adds: its items, the run's usage after it, and what it counts for. */
export interface StepOutput {
  items: readonly Item[];
  /** The run's usage so far; null leaves it as it was. */
  usage: Usage | null;
  /** The step's own usage, when it reached its end (then it is a model call). */
  stepUsage: Usage | null;
  modelCalls: number;
  modelAttempts: number;
  toolCalls: number;
}

/** Adds a step to the output; fails with LeaseLostError, writing nothing, when the writer's token is stale. */
export async function addStepOutput(tx: Queryable, writer: JournalWriter, step: StepOutput): Promise<void> {
  const { rowCount } = await tx.query(
    `UPDATE responses SET output = output || $3::jsonb, usage = COALESCE($4::jsonb, usage), step_usage = step_usage || $5::jsonb,
       model_calls = model_calls + $6, model_attempts = model_attempts + $7, tool_call_count = tool_call_count + $8
     WHERE id = $1 AND lease_token = $2`,
    [
      writer.responseId,
      writer.leaseToken,
      JSON.stringify(step.items),
      step.usage ? JSON.stringify(step.usage) : null,
      JSON.stringify(step.stepUsage ? [step.stepUsage] : []),
      step.modelCalls,
      step.modelAttempts,
      step.toolCalls,
    ],
  );
  if (rowCount === 0) throw new LeaseLostError(writer.responseId);
}

/** Appends items to the output (the caller holds the lease). */
export async function appendOutputItems(tx: Queryable, responseId: string, items: readonly Item[]): Promise<void> {
  await tx.query('UPDATE responses SET output = output || $2::jsonb WHERE id = $1', [responseId, JSON.stringify(items)]);
}

/** Rewrites the output and the kernel's own items for a repair, and counts the attempt (the caller holds the lease). */
export async function recordRepairRequest(tx: Queryable, responseId: string, output: readonly Item[], kernelItems: ResponseRow['kernel_items']): Promise<void> {
  await tx.query('UPDATE responses SET output = $2, kernel_items = $3, repair_attempts = repair_attempts + 1 WHERE id = $1', [
    responseId,
    JSON.stringify(output),
    JSON.stringify(kernelItems),
  ]);
}
