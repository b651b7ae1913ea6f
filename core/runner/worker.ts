// The worker: claims runnable responses up to its concurrency, keeps their leases
// alive with a heartbeat, and stops a run whose lease it lost. A NOTIFY wakes it;
// polling every PALAI_POLL_INTERVAL_MS is the backstop.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { LeaseLostError } from '../journal/journal.js';
import { anyWorkKey } from '../journal/wakeups.js';
import type { Kernel } from '../kernel.js';
import { claimNext, releaseLease, renewLease, type Claim } from './claim.js';
import { failRun, runResponse } from './run-response.js';

export class Worker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly running = new Map<string, { claim: Claim; abort: AbortController; done: Promise<void> }>();
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;

  constructor(private readonly kernel: Kernel) {}

  start(): void {
    this.loop ??= this.claimLoop();
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

  private launch(claim: Claim): void {
    const { config, logger, wakeups } = this.kernel;
    const abort = new AbortController();
    const log = logger.child({ response_id: claim.responseId, lease_token: claim.leaseToken });
    if (claim.previousStatus === 'in_progress') log.warn('took over a response whose lease expired');
    const heartbeat = setInterval(() => {
      renewLease(this.kernel.db, claim, config.leaseSeconds)
        .then((held) => {
          if (!held) abort.abort(new LeaseLostError(claim.responseId));
        })
        .catch((error) => log.warn({ err: error }, 'lease renewal failed'));
    }, Math.max(100, (config.leaseSeconds * 1000) / 3));
    const done = runResponse(this.kernel, claim, abort.signal)
      .catch(async (error) => {
        if (error instanceof LeaseLostError || abort.signal.reason instanceof LeaseLostError) {
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
        this.running.delete(claim.responseId);
        wakeups.wake(anyWorkKey);
      });
    this.running.set(claim.responseId, { claim, abort, done });
  }

  /** Stops claiming, interrupts running responses and hands their leases back. */
  async stop(): Promise<void> {
    this.stopping.abort();
    for (const run of this.running.values()) run.abort.abort(new Error('worker stopping'));
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
    await this.loop;
  }
}
