// ResponseStatus's values, for the filter: a type has none at run time. The
// check below fails tsc when the API document adds or drops a status.
import type { ResponseStatus } from '@palai/sdk';

export const RESPONSE_STATUSES = [
  'queued',
  'in_progress',
  'parked',
  'waiting_for_approval',
  'waiting_for_tool',
  'waiting_for_input',
  'completed',
  'failed',
  'canceled',
  'timed_out',
  'budget_exceeded',
] as const satisfies readonly ResponseStatus[];

type Missing = Exclude<ResponseStatus, (typeof RESPONSE_STATUSES)[number]>;
const complete: [Missing] extends [never] ? true : Missing = true;
void complete;

/** Finished: nothing more will happen to the response. */
export const FINISHED_STATUSES: ReadonlySet<ResponseStatus> = new Set<ResponseStatus>(['completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded']);

export const WAITING_STATUSES = ['waiting_for_approval', 'waiting_for_tool', 'waiting_for_input'] as const satisfies readonly ResponseStatus[];

export function isWaiting(status: ResponseStatus): boolean {
  return (WAITING_STATUSES as readonly ResponseStatus[]).includes(status);
}
