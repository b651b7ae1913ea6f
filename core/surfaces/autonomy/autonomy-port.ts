// The autonomy port: what the autonomy surface (adapters/autonomy) reads of its
// wing, and the names the wing declares beside its code.
//
// Glossary
//   objective   a durable goal of one agent; wakes work toward it
//   policy      what a person delegates to the wakes, approved by its hash
//   trigger     what wakes an objective: a cron schedule, the agent's one-shot
//               schedule_wake, or manual wakes (POST …/wake)
//   occurrence  one due time of a trigger; each is taken once, admitted as a
//               wake (a response) or recorded skipped with its reason
import { declareInboxSource } from '../../idempotency/inbox-sources.js';
import { declareSessionKeySource } from '../../sessions/session-keys.js';

/** Wakes in the inbox, keyed `<trigger>@<due ms>`: one response per occurrence. */
export const SCHEDULE_INBOX_SOURCE = declareInboxSource('schedule', 'trigger occurrence');
/** The one session of an objective whose session_mode is objective, keyed by the objective's id. */
export const OBJECTIVE_SESSION_KEYS = declareSessionKeySource('objective');

/** The signal a new trigger or a manual wake sends, so schedulers look at once. */
export const TRIGGERS_SIGNAL = 'autonomy.triggers';

/** The tool entry type the autonomy surface serves: schedule_wake and complete_objective, for wakes only. */
export const OBJECTIVE_TOOL_TYPE = 'objective' as const;

/** The metadata every wake carries. */
export const WAKE_METADATA = { objective: 'palai_objective', trigger: 'palai_trigger', dueAt: 'palai_due_at', policy: 'palai_policy' } as const;

/** What one scheduler tick did. */
export interface TickOutcome {
  /** Triggers and buffered occurrences it took. */
  claimed: number;
  admitted: number;
  /** Skipped occurrences by reason. */
  skipped: Partial<Record<string, number>>;
  /** Database transactions the tick committed. */
  transactions: number;
  /** From due time to admission, per admitted wake, in milliseconds. */
  lagsMs: number[];
  /** Whether it stopped at its bound with more due: tick again at once. */
  more: boolean;
}

/** A wake's call of schedule_wake, as the tool provider hands it over. */
export interface ScheduleWakeCall {
  responseId: string;
  callId: string;
  /** Exactly one of the two. */
  afterSeconds?: number;
  at?: string;
  reason: string;
}

/** The longest a one-shot wake may be put off. */
export const MAX_WAKE_DELAY_SECONDS = 366 * 24 * 3600;
