// The worker: claims runnable responses up to its concurrency, keeps their leases
// alive with a heartbeat, and interrupts a run when it is cancelled, passes its
// deadline or loses its lease. A NOTIFY wakes it; polling is the backstop.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { LeaseLostError } from '../journal/journal.js';
import { anyWorkKey, CANCEL_CHANNEL } from '../journal/wakeups.js';
import type { Kernel } from '../kernel.js';
import { claimNext, releaseLease, renewLease, type Claim } from './claim.js';
import { RunInterrupted } from './interrupt.js';
import { failRun, runResponse } from './run-response.js';

interface Running {
  claim: Claim;
  abort: AbortController;
  done: Promise<void>;
}

export class Worker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly running = new Map<string, Running>();
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(private readonly kernel: Kernel) {}

  async start(): Promise<void> {
    this.unlisten = await this.kernel.db.listen(CANCEL_CHANNEL, (responseId) => this.interrupt(responseId, 'cancel'));
    this.loop ??= this.claimLoop();
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
      log.warn('took over a response whose lease expired');
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
    void this.deadlineOf(claim).then((deadline) => {
      if (deadline !== null && !abort.signal.aborted) {
        deadlineTimer = setTimeout(() => abort.abort(new RunInterrupted('deadline')), Math.max(0, deadline - Date.now()));
      }
    });

    const done = runResponse(this.kernel, claim, abort.signal)
      .catch(async (error) => {
        const reason = abort.signal.reason instanceof RunInterrupted ? abort.signal.reason.reason : null;
        if (error instanceof LeaseLostError || reason === 'lease_lost') {
          log.warn('lease lost; another worker owns this response now');
        } else if (this.stopping.signal.aborted) {
          await releaseLease(this.kernel.db, claim).catch(() => undefined);
        } else {
          log.error({ err: error }, 'run failed unexpectedly');
          await failRun(this.kernel, claim).catch((e) => log.error({ err: e }, 'could not record the failure'));
        }
      })
      .finally(() => {
        clearInterval(heartbeat);
        clearTimeout(deadlineTimer);
        this.running.delete(claim.responseId);
        wakeups.wake(anyWorkKey);
      });
    this.running.set(claim.responseId, { claim, abort, done });
  }

  /** Stops claiming, interrupts running responses and hands their leases back. */
  async stop(): Promise<void> {
    this.stopping.abort();
    for (const run of this.running.values()) run.abort.abort(new RunInterrupted('shutdown'));
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
    await this.loop;
    await this.unlisten?.();
  }
}
