// Response status as data. The diagram:
//
//   queued → in_progress → completed | failed | canceled | timed_out | budget_exceeded
//   in_progress ⇄ waiting_for_approval | waiting_for_tool | waiting_for_input
//
// Any non-terminal state may also end as canceled, failed or timed_out (a cancel or
// a deadline does not wait for the run to come back to in_progress).
import type { ResponseStatus } from '../../generated/schemas.js';

export type { ResponseStatus };

export const TERMINAL_STATUSES = ['completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded'] as const satisfies readonly ResponseStatus[];
export const WAITING_STATUSES = ['waiting_for_approval', 'waiting_for_tool', 'waiting_for_input'] as const satisfies readonly ResponseStatus[];

const ENDINGS_FROM_ANYWHERE: ResponseStatus[] = ['canceled', 'failed', 'timed_out'];

export const TRANSITIONS: Record<ResponseStatus, readonly ResponseStatus[]> = {
  queued: ['in_progress', ...ENDINGS_FROM_ANYWHERE],
  in_progress: ['completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded', ...WAITING_STATUSES],
  waiting_for_approval: ['in_progress', ...ENDINGS_FROM_ANYWHERE],
  waiting_for_tool: ['in_progress', ...ENDINGS_FROM_ANYWHERE],
  waiting_for_input: ['in_progress', ...ENDINGS_FROM_ANYWHERE],
  completed: [],
  failed: [],
  canceled: [],
  timed_out: [],
  budget_exceeded: [],
};

export const isTerminal = (status: ResponseStatus): boolean => (TERMINAL_STATUSES as readonly string[]).includes(status);
export const isWaiting = (status: ResponseStatus): boolean => (WAITING_STATUSES as readonly string[]).includes(status);
export const canTransition = (from: ResponseStatus, to: ResponseStatus): boolean => TRANSITIONS[from].includes(to);

/** The journal event that announces a terminal status (OpenAI's names where they exist). */
export function terminalEventType(status: (typeof TERMINAL_STATUSES)[number]): string {
  switch (status) {
    case 'completed':
      return 'response.completed';
    case 'failed':
      return 'response.failed';
    case 'canceled':
      return 'response.cancelled';
    case 'timed_out':
    case 'budget_exceeded':
      return 'response.incomplete';
    default: {
      const unreachable: never = status;
      throw new Error(`unknown terminal status ${unreachable}`);
    }
  }
}

export const TERMINAL_EVENT_TYPES = new Set(TERMINAL_STATUSES.map(terminalEventType));
