// The worker: claims runnable responses up to its concurrency, keeps their leases
// alive with a heartbeat, and interrupts a run when it is cancelled, passes its
// deadline or loses its lease. A NOTIFY wakes it; polling is the backstop.
//
// It also offers its free slots to this process's API (the sync fast path): a
// response whose caller waits is admitted and claimed in one transaction and
// run here, with no NOTIFY hop and no wait in the queue — unless the queue may
// hold older work, which goes first. A caller waiting in this process for a run
// of this process is answered from the row the run ended with.
//
// A run that throws ends in one of three ways: its lease was lost (someone else
// owns it now: do nothing); the process is stopping or the database failed
// (hand the lease back, so this or another process continues it from the last
// commit); anything else is a bug, and the response ends `failed`.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IdempotencyClaim } from '../idempotency/inbox-port.js';
import { LeaseLostError } from '../journal/journal.js';
import { anyWorkKey, CANCEL_CHANNEL } from '../journal/wakeups.js';
import type { Kernel, LocalRuns } from '../kernel.js';
import type { RecalledKey } from '../auth/recalled-keys.js';
import { admitClaimed, withinAdmission, type AdmissionCommand, type Admitted } from '../responses/admission.js';
import type { ResponseRow } from '../responses/responses.js';
import { isTransientStoreError } from '../store/transient.js';
import { claimWork, releaseLease, renewLease, type Claim, type ClaimedRun } from './claim.js';
import { RunInterrupted } from './interrupt.js';
import { failRun, runResponse } from './run-response.js';

interface Running {
  claim: Claim;
  abort: AbortController;
  /** The row the run ended or parked with; null when it stopped without either. */
  done: Promise<ResponseRow | null>;
}

/** Backoff before a run the database interrupted may be claimed again: 1 s, doubling, at most 30 s. */
const STORE_RETRY_BASE_SECONDS = 1;
const STORE_RETRY_MAX_SECONDS = 30;
/** The longest delay setTimeout honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Worker implements LocalRuns {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly running = new Map<string, Running>();
  /** Slots taken by fast-path admissions not yet committed. */
  private reserved = 0;
  /**
   * Runs of claims whose transaction has not answered its COMMIT yet: the
   * NOTIFY of a claim may reach a waiter in this process first, and it should
   * wait for the run, not read.
   */
  private readonly claiming = new Map<string, Promise<ResponseRow | null>>();
  /** The last claim filled every free slot (or found none free): older work may be waiting in the queue. */
  private saturated = false;
  /** Consecutive database interruptions per response, for the backoff. */
  private readonly storeFailures = new Map<string, number>();
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(private readonly kernel: Kernel) {}

  async start(): Promise<void> {
    this.unlisten = await this.kernel.db.listen(CANCEL_CHANNEL, (responseId) => this.interrupt(responseId, 'cancel'));
    this.loop ??= this.claimLoop();
    this.kernel.localRuns = this;
  }

  /** Responses this process is running now. */
  get busy(): number {
    return this.running.size;
  }

  private get freeSlots(): number {
    return this.kernel.config.workerConcurrency - this.running.size - this.reserved;
  }

  async admitHere(projectId: string, command: AdmissionCommand, idem?: IdempotencyClaim, key?: RecalledKey): Promise<ResponseRow | null> {
    if (this.freeSlots <= 0 || this.saturated || this.stopping.signal.aborted) return null;
    const claimHere = { workerId: this.id, leaseSeconds: this.kernel.config.leaseSeconds };
    this.reserved++;
    let admitted: Admitted;
    try {
      admitted = await withinAdmission(this.kernel.db, command, idem, (q) =>
        admitClaimed(q, projectId, command, idem, claimHere, this.kernel.tools, key, this.kernel.agents),
      );
    } finally {
      this.reserved--;
    }
    if (admitted.kind === 'new') {
      const { row, spec, connection } = admitted;
      const claim: Claim = { responseId: row.id, projectId, leaseToken: row.lease_token, previousStatus: 'queued', takeover: false };
      this.launch({ claim, row: { ...row, open_calls: 0 }, spec, connection });
    }
    return admitted.row;
  }

  outcome(responseId: string): Promise<ResponseRow | null> | null {
    return this.running.get(responseId)?.done ?? this.claiming.get(responseId) ?? null;
  }

  /** Claims what fits in the free slots, in one transaction, and launches each run once it committed. */
  private async claimFree(free: number): Promise<number> {
    const { db, config } = this.kernel;
    const started = new Map<string, (run: Promise<ResponseRow | null> | null) => void>();
    const settle = (responseId: string, run: Promise<ResponseRow | null> | null) => {
      this.claiming.delete(responseId);
      started.get(responseId)?.(run);
    };
    let runs: ClaimedRun[];
    try {
      runs = await db.transaction(async (tx) => {
        const claimed = await claimWork(tx, this.id, config.leaseSeconds, free);
        for (const { claim } of claimed) this.claiming.set(claim.responseId, new Promise((resolve) => started.set(claim.responseId, resolve)));
        return claimed;
      });
    } catch (error) {
      for (const responseId of started.keys()) settle(responseId, null);
      throw error;
    }
    for (const run of runs) {
      // A claim that raced with stop() is handed straight back.
      if (this.stopping.signal.aborted) {
        settle(run.claim.responseId, null);
        await releaseLease(db, run.claim);
        continue;
      }
      this.launch(run);
      settle(run.claim.responseId, this.running.get(run.claim.responseId)!.done);
    }
    return runs.length;
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
        const free = this.freeSlots;
        // Full: a run that ends wakes this loop again, since more may be waiting.
        const claimed = free > 0 ? await this.claimFree(free) : 0;
        this.saturated = free <= 0 || claimed === free;
      } catch (error) {
        logger.warn({ err: error }, 'claiming work failed; retrying');
      }
      await woken.promise;
    }
  }

  private launch(run: ClaimedRun): void {
    const { claim } = run;
    const { config, logger, wakeups, metrics } = this.kernel;
    const abort = new AbortController();
    const log = logger.child({ response_id: claim.responseId, lease_token: claim.leaseToken });
    if (claim.takeover) {
      metrics.leaseTakeovers.inc();
      log.warn('took over a response whose lease expired or was handed back');
    }
    const heartbeat = setInterval(
      () => {
        renewLease(this.kernel.db, claim, config.leaseSeconds)
          .then(({ held, cancelRequested }) => {
            if (!held) abort.abort(new RunInterrupted('lease_lost'));
            else if (cancelRequested) abort.abort(new RunInterrupted('cancel'));
          })
          .catch((error) => log.warn({ err: error }, 'lease renewal failed'));
      },
      Math.max(100, (config.leaseSeconds * 1000) / 3),
    );
    let deadlineTimer: NodeJS.Timeout | undefined;
    // setTimeout fires at once for delays beyond 2^31-1 ms (24.8 days), so a far deadline is re-armed in steps.
    const armDeadline = (deadline: number) => {
      if (abort.signal.aborted) return;
      const wait = Math.max(0, deadline - Date.now());
      deadlineTimer = setTimeout(
        () => (wait > MAX_TIMER_MS ? armDeadline(deadline) : abort.abort(new RunInterrupted('deadline'))),
        Math.min(wait, MAX_TIMER_MS),
      );
    };
    if (run.row.deadline_at) armDeadline(new Date(run.row.deadline_at).getTime());

    const done = runResponse(this.kernel, run, abort.signal)
      .then((row) => {
        this.storeFailures.delete(claim.responseId);
        return row;
      })
      .catch((error) => this.afterFailure(claim, abort.signal, error, log))
      .finally(() => {
        clearInterval(heartbeat);
        clearTimeout(deadlineTimer);
        this.running.delete(claim.responseId);
        if (this.saturated) wakeups.wake(anyWorkKey);
      });
    this.running.set(claim.responseId, { claim, abort, done });
  }

  private async afterFailure(claim: Claim, signal: AbortSignal, error: unknown, log: Kernel['logger']): Promise<ResponseRow | null> {
    const reason = signal.reason instanceof RunInterrupted ? signal.reason.reason : null;
    if (error instanceof LeaseLostError || reason === 'lease_lost') {
      log.warn('lease lost; another worker owns this response now');
      return null;
    }
    if (reason === 'shutdown') {
      this.storeFailures.delete(claim.responseId);
      await releaseLease(this.kernel.db, claim).catch((e) => log.warn({ err: e }, 'could not hand the lease back; it expires on its own'));
      return null;
    }
    if (isTransientStoreError(error)) {
      // The run did nothing wrong: continue it from its last commit, after a pause,
      // here or in another process. If the database is still down, the lease simply expires.
      const failures = (this.storeFailures.get(claim.responseId) ?? 0) + 1;
      this.storeFailures.set(claim.responseId, failures);
      const ceiling = Math.min(STORE_RETRY_MAX_SECONDS, STORE_RETRY_BASE_SECONDS * 2 ** (failures - 1));
      const delay = ceiling / 2 + Math.random() * (ceiling / 2);
      this.kernel.metrics.storeInterruptions.inc();
      log.warn(
        { err: error, retry_in_s: Math.round(delay * 10) / 10, attempt: failures },
        'the database failed during a run; it continues from its last commit',
      );
      await releaseLease(this.kernel.db, claim, delay).catch(() => undefined);
      return null;
    }
    this.storeFailures.delete(claim.responseId);
    log.error({ err: error }, 'run failed unexpectedly');
    return failRun(this.kernel, claim).catch((e) => {
      log.error({ err: e }, 'could not record the failure');
      return null;
    });
  }

  /** Stops claiming (and running what this process admits) at once; running responses go on. */
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
    if (this.kernel.localRuns === this) this.kernel.localRuns = undefined;
  }
}
