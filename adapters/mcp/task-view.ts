// A Palai response, as an MCP task: the task id is the response id, and the
// kernel's status maps to the task's in one table.
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import type { ResponseState, ResponseStatus } from '../../core/api/index.js';
import { waitingText } from './call-result.js';

/** What a host is told to wait between polls. */
export const TASK_POLL_INTERVAL_MS = 1000;

export const TASK_STATUS_FOR: Readonly<Record<ResponseStatus, Task['status']>> = {
  queued: 'working',
  in_progress: 'working',
  waiting_for_input: 'input_required',
  waiting_for_approval: 'input_required',
  waiting_for_tool: 'input_required',
  parked: 'working',
  completed: 'completed',
  failed: 'failed',
  timed_out: 'failed',
  budget_exceeded: 'failed',
  canceled: 'cancelled',
};

const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

function statusMessage(state: ResponseState): string | undefined {
  if (state.error) return `${state.status}: ${state.error.message}`;
  const waiting = waitingText(state);
  return waiting || undefined;
}

export function toTask(state: ResponseState): Task {
  const message = statusMessage(state);
  return {
    taskId: state.id,
    status: TASK_STATUS_FOR[state.status],
    // The task lives as long as its response: until someone deletes it.
    ttl: null,
    createdAt: iso(state.created_at),
    // The kernel keeps no time per status change; the end is the last one it knows.
    lastUpdatedAt: iso(state.status_changed_at ?? state.completed_at ?? state.created_at),
    pollInterval: TASK_POLL_INTERVAL_MS,
    ...(message ? { statusMessage: message } : {}),
  };
}
