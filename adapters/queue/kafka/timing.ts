// Two small waits the Kafka runner needs: a deadline on a promise that may
// never settle (a broker that is gone), and a doubling backoff.

/** Waits for `promise` at most `ms`; calls `onTimeout` and resolves when the time is up first. Never rejects. */
export async function bounded(promise: Promise<unknown>, ms: number, onTimeout: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    const winner = await Promise.race([
      promise.then(
        () => 'done' as const,
        () => 'done' as const,
      ),
      timeout,
    ]);
    if (winner === 'timeout') onTimeout();
  } finally {
    clearTimeout(timer);
  }
}

/** Delays that double from `firstMs` up to `maxMs`, back to `firstMs` after a reset. */
export class Backoff {
  private current: number;

  constructor(
    private readonly firstMs: number,
    private readonly maxMs: number,
  ) {
    this.current = firstMs;
  }

  next(): number {
    const delay = this.current;
    this.current = Math.min(this.current * 2, this.maxMs);
    return delay;
  }

  reset(): void {
    this.current = this.firstMs;
  }
}
