// Response status as data. The diagram:
//
//   queued → in_progress → completed | failed | canceled | timed_out | budget_exceeded
//   in_progress ⇄ waiting_for_approval | waiting_for_tool | waiting_for_input
//
// Any non-terminal state may also end as canceled, failed or timed_out (a cancel or
// a deadline does not wait for the run to come back to in_progress). A waiting
// response whose answer settles one wait while another remains goes back to the
// workers, which park it in the next wait: waits never follow each other directly.
// Every status write goes through this table: the status writer
// (status-writer.ts) checks each change, and a claim only takes statuses that
// may become in_progress.
import type { ResponseStatus } from '../generated/schemas.js';

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

export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export type WaitingStatus = (typeof WAITING_STATUSES)[number];

/** Statuses a worker's claim may move to in_progress (in_progress itself: a lease taken over, not a change). */
export const CLAIMABLE_STATUSES: readonly ResponseStatus[] = (Object.keys(TRANSITIONS) as ResponseStatus[]).filter(
  (status) => status === 'in_progress' || canTransition(status, 'in_progress'),
);
