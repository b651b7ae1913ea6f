// When a failed webhook delivery is tried again. The schedule is the operator's
// (PALAI_WEBHOOK_RETRY_SCHEDULE: seconds, then minutes, then hours, about three
// days by default); each delay is drawn ±20 % so receivers coming back are not
// hit by every retry at once. A receiver's Retry-After on 429 or 503 wins, up to
// a day. Once the schedule runs out the delivery is dead.

const JITTER = 0.2;
const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;

/** The delay after the `attempt`-th failed attempt (1 for the first), or null when no attempt follows. */
export function scheduledDelayMs(schedule: readonly number[], attempt: number, random: () => number = Math.random): number | null {
  const base = schedule[attempt - 1];
  if (base === undefined) return null;
  return Math.max(0, Math.round(base * (1 - JITTER + 2 * JITTER * random())));
}

/** A Retry-After header (seconds or an HTTP date) in ms, capped at a day; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const date = Date.parse(trimmed);
    if (Number.isNaN(date)) return undefined;
    ms = Math.max(0, date - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** Whether a status is the receiver asking to be left alone for a while. */
export const honoursRetryAfter = (status: number): boolean => status === 429 || status === 503;
