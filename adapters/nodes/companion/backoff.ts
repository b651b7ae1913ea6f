// The wait before reconnecting: about 1 s, doubling up to 30 s, each wait
// jittered by ±25 % so a hub's restart is not met by every node at once.
export const BACKOFF_FIRST_MS = 1_000;
export const BACKOFF_MAX_MS = 30_000;

export class Backoff {
  private attempt = 0;

  constructor(private readonly random: () => number = Math.random) {}

  /** The next wait, and one more attempt counted. */
  next(): number {
    const base = Math.min(BACKOFF_FIRST_MS * 2 ** this.attempt, BACKOFF_MAX_MS);
    this.attempt = Math.min(this.attempt + 1, 16);
    return Math.round(base * (0.75 + 0.5 * this.random()));
  }

  /** After a connection was admitted: the next disconnect starts from 1 s again. */
  reset(): void {
    this.attempt = 0;
  }
}
