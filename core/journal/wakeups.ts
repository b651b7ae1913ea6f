// NOTIFY fan-out: one LISTEN per channel per process, dispatched to in-process
// waiters by key. Notifications are only hints; every waiter also has a timeout
// so polling catches anything a lost notification missed.
import type { Db } from '../store/db.js';

export const EVENTS_CHANNEL = 'palai_events';
export const WORK_CHANNEL = 'palai_work';
/** Payload: a response id whose cancellation was requested; its worker interrupts the run. */
export const CANCEL_CHANNEL = 'palai_cancel';

type Waiter = () => void;

export class Wakeups {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private unlisten: Array<() => Promise<void>> = [];

  constructor(private readonly db: Db) {}

  async start(): Promise<void> {
    for (const channel of [EVENTS_CHANNEL, WORK_CHANNEL]) {
      this.unlisten.push(await this.db.listen(channel, (payload) => this.wake(`${channel}:${payload}`)));
      // Every notification also wakes anyone waiting for "any work" or "any event".
      this.unlisten.push(await this.db.listen(channel, () => this.wake(`${channel}:*`)));
    }
  }

  private wakes = 0;

  /** How many wake-ups this process has delivered: a read begun at the same count has missed none. */
  get delivered(): number {
    return this.wakes;
  }

  /** Wakes waiters in this process without a database round trip. */
  wake(key: string): void {
    this.wakes++;
    const set = this.waiters.get(key);
    if (!set) return;
    this.waiters.delete(key);
    for (const waiter of set) waiter();
  }

  /**
   * Arms a wait for the next wake-up of `key`: `promise` resolves then, after
   * `timeoutMs`, or when `signal` aborts; `cancel` disarms it early.
   */
  arm(key: string, timeoutMs: number, signal?: AbortSignal): { promise: Promise<void>; cancel: () => void } {
    let done: () => void = () => undefined;
    const promise = new Promise<void>((resolve) => {
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      const waiters = set;
      done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiters.get(key) === waiters) this.waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      waiters.add(done);
      if (signal?.aborted) done();
    });
    return { promise, cancel: () => done() };
  }

  /** Resolves on the next wake-up for `key`, after `timeoutMs`, or when `signal` aborts. */
  wait(key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.arm(key, timeoutMs, signal).promise;
  }

  async stop(): Promise<void> {
    for (const off of this.unlisten) await off().catch(() => undefined);
    this.unlisten = [];
    for (const key of [...this.waiters.keys()]) this.wake(key);
  }
}

export const eventsKey = (responseId: string): string => `${EVENTS_CHANNEL}:${responseId}`;
export const anyWorkKey = `${WORK_CHANNEL}:*`;
/** Woken by an append to any response's journal (project feeds filter after waking). */
export const anyEventKey = `${EVENTS_CHANNEL}:*`;
