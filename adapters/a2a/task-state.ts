// The one table from the kernel's response status to A2A's task state. Every
// waiting state is `input-required` (the answer's shape tells which: see
// answers.ts); a response parked on an outside party is still `working`, since
// the client is asked nothing; every terminal status is a terminal task state, and the status
// itself travels in the task's metadata (`palai_status`), so a timed-out run is
// told apart from one that failed.
import { TaskState } from '@a2a-js/sdk';
import type { ResponseStatus } from '../../core/api/index.js';

export const TASK_STATE: Readonly<Record<ResponseStatus, TaskState>> = {
  queued: TaskState.TASK_STATE_SUBMITTED,
  in_progress: TaskState.TASK_STATE_WORKING,
  waiting_for_approval: TaskState.TASK_STATE_INPUT_REQUIRED,
  waiting_for_tool: TaskState.TASK_STATE_INPUT_REQUIRED,
  waiting_for_input: TaskState.TASK_STATE_INPUT_REQUIRED,
  parked: TaskState.TASK_STATE_WORKING,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
  timed_out: TaskState.TASK_STATE_FAILED,
  budget_exceeded: TaskState.TASK_STATE_FAILED,
};

/** The kernel statuses a task state stands for (ListTasks filters by them). */
export function statusesOf(state: TaskState): ResponseStatus[] {
  return (Object.keys(TASK_STATE) as ResponseStatus[]).filter((status) => TASK_STATE[status] === state);
}
