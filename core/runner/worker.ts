// The worker: claims runnable responses up to its concurrency, keeps their leases
// alive with a heartbeat, and interrupts a run when it is cancelled, passes its
// deadline or loses its lease. A NOTIFY wakes it; polling is the backstop.
//
// A run that throws ends in one of three ways: its lease was lost (someone else
// owns it now: do nothing); the process is stopping or the database failed
// (hand the lease back, so this or another process continues it from the last
// commit); anything else is a bug, and the response ends `failed`.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { LeaseLostError } from '../journal/journal.js';
import { anyWorkKey, CANCEL_CHANNEL } from '../journal/wakeups.js';
import type { Kernel } from '../kernel.js';
import { isTransientStoreError } from '../store/transient.js';
import { claimNext, releaseLease, renewLease, type Claim } from './claim.js';
import { RunInterrupted } from './interrupt.js';
import { failRun, runResponse } from './run-response.js';

interface Running {
  claim: Claim;
  abort: AbortController;
  done: Promise<void>;
}

/** Backoff before a run the database interrupted may be claimed again: 1 s, doubling, at most 30 s. */
const STORE_RETRY_BASE_SECONDS = 1;
const STORE_RETRY_MAX_SECONDS = 30;
/** The longest delay setTimeout honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Worker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly running = new Map<string, Running>();
  /** Consecutive database interruptions per response, for the backoff. */
  private readonly storeFailures = new Map<string, number>();
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(private readonly kernel: Kernel) {}

  async start(): Promise<void> {
    this.unlisten = await this.kernel.db.listen(CANCEL_CHANNEL, (responseId) => this.interrupt(responseId, 'cancel'));
    this.loop ??= this.claimLoop();
  }

  /** Responses this process is running now. */
  get busy(): number {
    return this.running.size;
  }

  private interrupt(responseId: string, reason: RunInterrupted['reason']): void {
    this.running.get(responseId)?.abort.abort(new RunInterrupted(reason));
  }

  private async claimLoop(): Promise<void> {
    const { config, logger, wakeups } = this.kernel;
    while (!this.stopping.signal.aborted) {
      // Arm before claiming so a NOTIFY that lands during the claim is not lost.
      const woken = wakeups.arm(anyWorkKey, config.pollIntervalMs, this.stopping.signal);
      try {
        while (this.running.size < config.workerConcurrency && !this.stopping.signal.aborted) {
          const claim = await claimNext(this.kernel.db, this.id, config.leaseSeconds);
          if (!claim) break;
          // A claim that raced with stop() is handed straight back.
          if (this.stopping.signal.aborted) {
            await releaseLease(this.kernel.db, claim);
            break;
          }
          this.launch(claim);
        }
      } catch (error) {
        logger.warn({ err: error }, 'claiming work failed; retrying');
      }
      await woken.promise;
    }
  }

  private async deadlineOf(claim: Claim): Promise<number | null> {
    const { rows } = await this.kernel.db.query<{ deadline_at: Date | null }>('SELECT deadline_at FROM responses WHERE id = $1', [claim.responseId]);
    return rows[0]?.deadline_at ? new Date(rows[0].deadline_at).getTime() : null;
  }

  private launch(claim: Claim): void {
    const { config, logger, wakeups, metrics } = this.kernel;
    const abort = new AbortController();
    const log = logger.child({ response_id: claim.responseId, lease_token: claim.leaseToken });
    if (claim.takeover) {
      metrics.leaseTakeovers.inc();
      log.warn('took over a response whose lease expired or was handed back');
    }
    const heartbeat = setInterval(() => {
      renewLease(this.kernel.db, claim, config.leaseSeconds)
        .then(({ held, cancelRequested }) => {
          if (!held) abort.abort(new RunInterrupted('lease_lost'));
          else if (cancelRequested) abort.abort(new RunInterrupted('cancel'));
        })
        .catch((error) => log.warn({ err: error }, 'lease renewal failed'));
    }, Math.max(100, (config.leaseSeconds * 1000) / 3));
    let deadlineTimer: NodeJS.Timeout | undefined;
    // setTimeout fires at once for delays beyond 2^31-1 ms (24.8 days), so a far deadline is re-armed in steps.
    const armDeadline = (deadline: number) => {
      if (abort.signal.aborted) return;
      const wait = Math.max(0, deadline - Date.now());
      deadlineTimer = setTimeout(() => (wait > MAX_TIMER_MS ? armDeadline(deadline) : abort.abort(new RunInterrupted('deadline'))), Math.min(wait, MAX_TIMER_MS));
    };
    this.deadlineOf(claim)
      .then((deadline) => {
        if (deadline !== null) armDeadline(deadline);
      })
      // Without the deadline timer the run still stops at its deadline: every step checks it first.
      .catch((error) => log.warn({ err: error }, 'reading the deadline failed'));

    const done = runResponse(this.kernel, claim, abort.signal)
      .then(() => void this.storeFailures.delete(claim.responseId))
      .catch((error) => this.afterFailure(claim, abort.signal, error, log))
      .finally(() => {
        clearInterval(heartbeat);
        clearTimeout(deadlineTimer);
        this.running.delete(claim.responseId);
        wakeups.wake(anyWorkKey);
      });
    this.running.set(claim.responseId, { claim, abort, done });
  }

  private async afterFailure(claim: Claim, signal: AbortSignal, error: unknown, log: Kernel['logger']): Promise<void> {
    const reason = signal.reason instanceof RunInterrupted ? signal.reason.reason : null;
    if (error instanceof LeaseLostError || reason === 'lease_lost') {
      log.warn('lease lost; another worker owns this response now');
      return;
    }
    if (reason === 'shutdown') {
      this.storeFailures.delete(claim.responseId);
      await releaseLease(this.kernel.db, claim).catch((e) => log.warn({ err: e }, 'could not hand the lease back; it expires on its own'));
      return;
    }
    if (isTransientStoreError(error)) {
      // The run did nothing wrong: continue it from its last commit, after a pause,
      // here or in another process. If the database is still down, the lease simply expires.
      const failures = (this.storeFailures.get(claim.responseId) ?? 0) + 1;
      this.storeFailures.set(claim.responseId, failures);
      const ceiling = Math.min(STORE_RETRY_MAX_SECONDS, STORE_RETRY_BASE_SECONDS * 2 ** (failures - 1));
      const delay = ceiling / 2 + Math.random() * (ceiling / 2);
      this.kernel.metrics.storeInterruptions.inc();
      log.warn({ err: error, retry_in_s: Math.round(delay * 10) / 10, attempt: failures }, 'the database failed during a run; it continues from its last commit');
      await releaseLease(this.kernel.db, claim, delay).catch(() => undefined);
      return;
    }
    this.storeFailures.delete(claim.responseId);
    log.error({ err: error }, 'run failed unexpectedly');
    await failRun(this.kernel, claim).catch((e) => log.error({ err: e }, 'could not record the failure'));
  }

  /** Stops claiming at once; running responses go on. */
  stopClaiming(): void {
    this.stopping.abort();
  }

  /**
   * Stops claiming, gives running responses up to `graceMs` to finish (or to
   * park waiting for someone), then interrupts the rest and hands their leases
   * back so another process continues them at once.
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopClaiming();
    const runs = () => [...this.running.values()];
    if (graceMs > 0 && this.running.size > 0) {
      const grace = new AbortController();
      await Promise.race([Promise.allSettled(runs().map((r) => r.done)), sleep(graceMs, undefined, { signal: grace.signal }).catch(() => undefined)]);
      grace.abort();
    }
    for (const run of runs()) run.abort.abort(new RunInterrupted('shutdown'));
    await Promise.allSettled(runs().map((r) => r.done));
    await this.loop;
    await this.unlisten?.().catch(() => undefined);
  }
}
