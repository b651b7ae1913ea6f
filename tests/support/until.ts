// Waits for a condition instead of sleeping and hoping: polls `probe` until it
// answers something truthy. The long failsafe only turns a hang into a failure
// that names what never happened; no test relies on it for timing.
import { setTimeout as sleep } from 'node:timers/promises';

export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, intervalMs = 20): Promise<T> {
  const failsafe = Date.now() + 60_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > failsafe) throw new Error(`never happened: ${what}`);
    await sleep(intervalMs);
  }
}

/**
 * Until the store's clock passes `at`: deadlines and expiries are the store's, not this process's.
 * Read as clock_timestamp(), so it moves inside a transaction too.
 */
export const untilStorePasses = (db: { query<R>(sql: string, params?: unknown[]): Promise<{ rows: R[] }> }, at: Date, what: string) =>
  until(what, async () => (await db.query<{ past: boolean }>('SELECT clock_timestamp() > $1::timestamptz AS past', [at])).rows[0].past);
