// Response status as data. The diagram:
//
//   queued → in_progress → completed | failed | canceled | timed_out | budget_exceeded
//   in_progress ⇄ waiting_for_approval | waiting_for_tool | waiting_for_input
//   in_progress ⇄ parked
//
// Any non-terminal state may also end as canceled, failed or timed_out (a cancel or
// a deadline does not wait for the run to come back to in_progress). A waiting
// response whose answer settles one wait while another remains goes back to the
// workers, which park it in the next wait: waits never follow each other directly.
//
// A wait (`waiting_for_*`) is one the caller must act on: a synchronous caller is
// answered there. `parked` is a wait for an outside party (a companion node
// running a command): no worker holds it either, but nobody is asked anything, so
// every surface keeps waiting through it. Settled = terminal or a wait; suspended
// = a wait or parked (no worker holds it; a claim takes it when its wake-up is due).
//
// Every status write goes through this table: the status writer
// (status-writer.ts) checks each change, and a claim only takes statuses that
// may become in_progress.
import type { ResponseStatus } from '../generated/schemas.js';

export type { ResponseStatus };

export const TERMINAL_STATUSES = ['completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded'] as const satisfies readonly ResponseStatus[];
export const WAITING_STATUSES = ['waiting_for_approval', 'waiting_for_tool', 'waiting_for_input'] as const satisfies readonly ResponseStatus[];
export const PARKED_STATUS = 'parked' as const satisfies ResponseStatus;
export const SUSPENDED_STATUSES = [...WAITING_STATUSES, PARKED_STATUS] as const satisfies readonly ResponseStatus[];
/** Where a synchronous caller is answered: the end, or a wait the caller must act on. */
export const SETTLED_STATUSES = [...TERMINAL_STATUSES, ...WAITING_STATUSES] as const satisfies readonly ResponseStatus[];

const ENDINGS_FROM_ANYWHERE: ResponseStatus[] = ['canceled', 'failed', 'timed_out'];

export const TRANSITIONS: Record<ResponseStatus, readonly ResponseStatus[]> = {
  queued: ['in_progress', ...ENDINGS_FROM_ANYWHERE],
  in_progress: ['completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded', ...SUSPENDED_STATUSES],
  waiting_for_approval: ['in_progress', ...ENDINGS_FROM_ANYWHERE],
  waiting_for_tool: ['in_progress', ...ENDINGS_FROM_ANYWHERE],
  waiting_for_input: ['in_progress', ...ENDINGS_FROM_ANYWHERE],
  parked: ['in_progress', ...ENDINGS_FROM_ANYWHERE],
  completed: [],
  failed: [],
  canceled: [],
  timed_out: [],
  budget_exceeded: [],
};

const among = (statuses: readonly string[]) => (status: ResponseStatus) => statuses.includes(status);

export const isTerminal: (status: ResponseStatus) => boolean = among(TERMINAL_STATUSES);
/** A wait the caller must act on (answer, decide, give input). */
export const isWaiting: (status: ResponseStatus) => boolean = among(WAITING_STATUSES);
/** Parked on an outside party: nobody is asked anything, every surface keeps waiting. */
export const isParked = (status: ResponseStatus): boolean => status === PARKED_STATUS;
/** No worker holds it: a wait or parked. */
export const isSuspended: (status: ResponseStatus) => boolean = among(SUSPENDED_STATUSES);
/** Terminal or a wait the caller must act on: where a synchronous caller is answered. */
export const isSettled: (status: ResponseStatus) => boolean = among(SETTLED_STATUSES);
export const canTransition = (from: ResponseStatus, to: ResponseStatus): boolean => TRANSITIONS[from].includes(to);

export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export type WaitingStatus = (typeof WAITING_STATUSES)[number];
export type SuspendedStatus = (typeof SUSPENDED_STATUSES)[number];

/** Statuses a worker's claim may move to in_progress (in_progress itself: a lease taken over, not a change). */
export const CLAIMABLE_STATUSES: readonly ResponseStatus[] = (Object.keys(TRANSITIONS) as ResponseStatus[]).filter(
  (status) => status === 'in_progress' || canTransition(status, 'in_progress'),
);
