// Which of a trigger's due occurrences fire, by its missed-run policy. An
// occurrence taken within the grace of its due time is on time; one due longer
// ago was missed (the hub was down, or the objective paused):
//   skip      every missed one is recorded `missed`; none fires
//   run_once  one wake for all of them: the newest fires unless one on time does
//   catch_up  each inside the window fires, oldest first, at most max_catch_up
//             (counted across the ticks one backlog takes: caught_up); the rest
//             are recorded `catch-up-cap`, those before the window `missed`
import type { WakeSkipReason } from '../../../generated/schemas.js';
import { loadSchedule } from './cron.js';
import type { TriggerRow } from './objective-views.js';

/** The most occurrences of one trigger one tick takes; the rest wait for the next. */
export const MAX_OCCURRENCES_PER_TICK = 1000;

export interface Occurrence {
  dueAt: Date;
  /** Missed and fired anyway (run_once, catch_up): it does not wait for a wake still running. */
  catchUp: boolean;
}

export interface TriggerPlan {
  fire: Occurrence[];
  skip: { dueAt: Date; reason: WakeSkipReason }[];
  /** The trigger's next due time after these, or null: it is done. */
  next: Date | null;
  /**
   * More are due than this tick took: the backlog goes on in the next tick, and
   * its catch-up count with it (else the count starts over: a backlog taken whole).
   */
  more: boolean;
}

/** The occurrences of `trigger` due by `now`, oldest first, at most the bound, and the one after them. */
function dueOccurrences(trigger: TriggerRow, now: Date): { due: Date[]; next: Date | null } {
  const first = trigger.next_due_at;
  if (first === null || first > now) return { due: [], next: first };
  if (trigger.kind !== 'cron' || trigger.cron === null) return { due: [first], next: null };
  const schedule = loadSchedule(trigger.cron, trigger.timezone ?? 'UTC');
  const due = [first, ...schedule.between(first, now, MAX_OCCURRENCES_PER_TICK - 1)];
  let next = schedule.nextAfter(due[due.length - 1]);
  const end = trigger.end_at;
  if (end !== null) {
    const inside = due.filter((d) => d <= end);
    if (next !== null && next > end) next = null;
    return { due: inside, next: inside.length < due.length ? null : next };
  }
  return { due, next };
}

export function planTrigger(trigger: TriggerRow, now: Date, graceSeconds: number): TriggerPlan {
  const { due, next } = dueOccurrences(trigger, now);
  const late = (d: Date) => now.getTime() - d.getTime() > graceSeconds * 1000;
  const missed = due.filter(late);
  const onTime = due.filter((d) => !late(d));
  const fire: Occurrence[] = onTime.map((dueAt) => ({ dueAt, catchUp: false }));
  const skip: TriggerPlan['skip'] = [];
  const policy = trigger.kind === 'cron' ? trigger.missed_run_policy : 'run_once';
  // More are due than one tick takes: the one wake for all of them is the newest, in a later tick.
  const more = next !== null && next <= now;
  if (policy === 'skip') {
    for (const dueAt of missed) skip.push({ dueAt, reason: 'missed' });
  } else if (policy === 'run_once') {
    const newest = onTime.length === 0 && !more ? missed.at(-1) : undefined;
    for (const dueAt of missed) if (dueAt !== newest) skip.push({ dueAt, reason: 'missed' });
    if (newest) fire.unshift({ dueAt: newest, catchUp: true });
  } else {
    const windowStart = now.getTime() - trigger.catchup_window_seconds * 1000;
    const caught: Occurrence[] = [];
    const room = Math.max(0, trigger.max_catch_up - trigger.caught_up);
    for (const dueAt of missed) {
      if (dueAt.getTime() < windowStart) skip.push({ dueAt, reason: 'missed' });
      else if (caught.length < room) caught.push({ dueAt, catchUp: true });
      else skip.push({ dueAt, reason: 'catch-up-cap' });
    }
    fire.unshift(...caught);
  }
  return { fire, skip, next, more };
}
