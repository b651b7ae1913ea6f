// How long a failed delivery waits before its next attempt: exponential
// backoff with full jitter (a uniform draw below a ceiling that doubles per
// attempt, up to a cap), so receivers that come back are not hit by every
// retry at once. A consumer that knows better (Retry-After) decides instead.

export interface BackoffOptions {
  /** The ceiling after the first failed attempt, doubling after each further one. Default 1000 ms. */
  baseMs: number;
  /** The highest ceiling. Default 1 hour. */
  capMs: number;
  /** Uniform in [0, 1). Default Math.random; tests pass a seeded one. */
  random: () => number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, capMs: 60 * 60 * 1000, random: Math.random };

/** The highest delay after the `attempts`-th failed attempt (1 for the first). */
export function backoffCeilingMs(attempts: number, options: Pick<BackoffOptions, 'baseMs' | 'capMs'>): number {
  const doublings = Math.max(0, Math.floor(attempts) - 1);
  return Math.min(options.capMs, options.baseMs * 2 ** doublings);
}

/**
 * The delay before the next attempt, after `attempts` failed ones. A finite,
 * non-negative `retryAfterMs` from the consumer wins, even above the cap.
 */
export function retryDelayMs(attempts: number, options: BackoffOptions, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) return Math.round(retryAfterMs);
  return Math.floor(options.random() * backoffCeilingMs(attempts, options));
}
