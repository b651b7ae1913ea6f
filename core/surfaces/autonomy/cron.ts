// The project's one cron implementation: a schedule's occurrences, from croner
// behind this module (the import rule lets no other file import a cron library).
// Cron takes five fields, or six with seconds first; the time zone is an IANA name.
// Occurrences are instants: a local time skipped by a DST change gives one
// occurrence at the next valid time, and a repeated one gives one, its first.
import { Cron } from 'croner';

/** A schedule checked by `parseSchedule`: it yields occurrences, never throws. */
export interface Schedule {
  readonly cron: string;
  readonly timezone: string;
  /** The first occurrence strictly after `after`, or null when the pattern has no more. */
  nextAfter(after: Date): Date | null;
  /** The occurrences in (after, until], oldest first, at most `limit`. */
  between(after: Date, until: Date, limit: number): Date[];
}

/** Why a schedule was refused, with the field it names (`cron` or `timezone`). */
export class ScheduleError extends Error {
  constructor(
    readonly field: 'cron' | 'timezone',
    message: string,
  ) {
    super(message);
    this.name = 'ScheduleError';
  }
}

/** How many occurrences are read to find the schedule's shortest interval. */
const INTERVAL_SAMPLE = 64;

export interface ScheduleOptions {
  /** IANA time zone; default `UTC`. */
  timezone?: string;
  /** The shortest interval allowed between two occurrences, in seconds; default 0 (no minimum). */
  minIntervalSeconds?: number;
  /** Where the interval check starts reading occurrences; default now. */
  from?: Date;
}

/** Checks a cron expression and its time zone; throws ScheduleError naming the field. */
export function parseSchedule(cron: string, options: ScheduleOptions = {}): Schedule {
  const timezone = options.timezone ?? 'UTC';
  if (!isTimeZone(timezone)) throw new ScheduleError('timezone', `${JSON.stringify(timezone)} is not an IANA time zone.`);
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    throw new ScheduleError('cron', `A cron expression has five fields, or six with seconds first; ${JSON.stringify(cron)} has ${fields.length}.`);
  }
  let pattern: Cron;
  try {
    pattern = cronOf(fields, timezone);
  } catch (error) {
    throw new ScheduleError('cron', `${JSON.stringify(cron)} is not a cron expression: ${(error as Error).message.replace(/^CronPattern: /, '')}`);
  }
  const schedule = scheduleOf(pattern, cron, timezone);
  const first = schedule.nextAfter(options.from ?? new Date());
  if (!first) throw new ScheduleError('cron', `${JSON.stringify(cron)} has no occurrence after now.`);
  const minimum = options.minIntervalSeconds ?? 0;
  const shortest = shortestInterval(schedule, first);
  if (shortest !== null && shortest < minimum * 1000) {
    throw new ScheduleError('cron', `${JSON.stringify(cron)} fires every ${shortest / 1000} s; the shortest interval allowed is ${minimum} s.`);
  }
  return schedule;
}

/** A paused croner pattern: it only computes occurrences, never runs anything. */
const cronOf = (fields: string[], timezone: string): Cron => new Cron(fields.join(' '), { timezone, paused: true, mode: '5-or-6-parts' });

/** Stored schedules by cron and zone: each tick reads the same few again. */
const loaded = new Map<string, Schedule>();
const LOADED_MAX = 4096;

/**
 * A schedule `parseSchedule` accepted when it was stored, for reading its
 * occurrences: no interval check, and no refusal when it has no more (it yields none).
 */
export function loadSchedule(cron: string, timezone: string): Schedule {
  const key = `${timezone} ${cron}`;
  let schedule = loaded.get(key);
  if (!schedule) {
    schedule = scheduleOf(cronOf(cron.trim().split(/\s+/), timezone), cron, timezone);
    if (loaded.size >= LOADED_MAX) loaded.clear();
    loaded.set(key, schedule);
  }
  return schedule;
}

/** Wall-clock time in a zone as sortable text ("2026-10-25, 02:30:00"): what a person's clock shows. */
function wallClock(timezone: string): (at: Date) => string {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  return (at) => format.format(at);
}

function scheduleOf(pattern: Cron, cron: string, timezone: string): Schedule {
  const local = wallClock(timezone);
  // When the clocks go back an hour, croner yields the repeated local times again: an
  // occurrence whose wall-clock time is not later than the one before it is that repeat.
  const nextAfter = (after: Date) => {
    const floor = local(after);
    let next = pattern.nextRun(after);
    while (next && local(next) <= floor) next = pattern.nextRun(next);
    return next;
  };
  return {
    cron,
    timezone,
    nextAfter,
    between(after, until, limit) {
      const found: Date[] = [];
      for (let at = nextAfter(after); at && at <= until && found.length < limit; at = nextAfter(at)) found.push(at);
      return found;
    },
  };
}

/** The shortest gap between consecutive occurrences from `first` on, in ms (null when `first` is the last). */
function shortestInterval(schedule: Schedule, first: Date): number | null {
  let shortest: number | null = null;
  let previous = first;
  for (let i = 0; i < INTERVAL_SAMPLE; i++) {
    const next = schedule.nextAfter(previous);
    if (!next) break;
    const gap = next.getTime() - previous.getTime();
    shortest = shortest === null ? gap : Math.min(shortest, gap);
    previous = next;
  }
  return shortest;
}

export function isTimeZone(name: string): boolean {
  if (name.length === 0 || name.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
