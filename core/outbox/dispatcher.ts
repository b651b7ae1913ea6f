// The outbox dispatcher: claims due deliveries for the consumers registered in
// this process, runs their attempts concurrently and records how each ended.
// A NOTIFY on the outbox channel wakes it at commit; polling is the backstop.
//
// A claim's lease is short and renewed every third of it while its attempt
// runs, so the deliveries of a process that dies are taken up elsewhere within
// one lease, however long attempts may run. An attempt's signal aborts when it
// runs out of time, when a renewal finds its claim gone, or when its lease ran
// out unrenewed (the store unreachable). An attempt that goes on regardless may
// see its delivery claimed and made again elsewhere; at least once allows that,
// and the delivery id, the same on every attempt, lets receivers deduplicate.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Db } from '../store/db.js';
import { DEFAULT_BACKOFF, retryDelayMs, type BackoffOptions } from './backoff.js';
import { claimDeliveries, completeDelivery, killDelivery, releaseDelivery, renewDeliveries, retryDelivery, type ClaimedDelivery } from './claims.js';
import { OUTBOX_CHANNEL, storedError, type DeliveryResult, type OutboxConsumer, type OutboxDelivery } from './outbox-port.js';

export interface OutboxDispatcherOptions {
  db: Db;
  logger: Logger;
  /** Names this process in the deliveries it holds. Default host:pid:random. */
  owner?: string;
  /** How long a claim holds its delivery unrenewed; renewed every third of it while the attempt runs. Default 15 s. */
  leaseSeconds?: number;
  /** How long one attempt may run; its signal aborts then. Default 60 s. */
  attemptTimeoutSeconds?: number;
  /** Deliveries claimed per query. Default 10. */
  batchSize?: number;
  /** Attempts running at once that have not yet turned slow. Default 20. */
  concurrency?: number;
  /**
   * An attempt running longer than this stops counting against `concurrency`,
   * so targets that hang never starve the others of slots. Default 2000 ms.
   */
  slowAfterMs?: number;
  /** Attempts running at once, slow ones included: the hard bound on sockets. Default 500. */
  maxInFlight?: number;
  /** How often to look for due deliveries when no NOTIFY comes. Default 1000 ms. */
  pollIntervalMs?: number;
  /** Delay before a failed delivery's next attempt. Default 1 s base, 1 h cap, Math.random. */
  backoff?: Partial<BackoffOptions>;
  /** A delivery whose attempt number this many fails is dead. Default 15. */
  maxAttempts?: number;
  /** How long stop() waits for attempts that ignore their signal. Default 5000 ms. */
  stopTimeoutMs?: number;
  /** Counts ended attempts (palai_outbox_attempts_total). Default: not counted. */
  metrics?: Pick<Metrics, 'outboxAttempts'>;
}

/** How an attempt ended for the store. `lease_lost`: its lease had passed to another claim, nothing was written. */
export type AttemptOutcome = 'delivered' | 'retry' | 'dead' | 'released' | 'lease_lost';

type AbortReason = 'shutdown' | 'timeout' | 'lease_expired' | 'lease_lost';

const ABORT_MESSAGES: Record<AbortReason, string> = {
  shutdown: 'the dispatcher is stopping',
  timeout: 'the attempt ran out of time',
  lease_expired: "the attempt's lease ran out before it could be renewed",
  lease_lost: 'the delivery was claimed again elsewhere',
};

class AttemptAborted extends Error {
  constructor(readonly reason: AbortReason) {
    super(ABORT_MESSAGES[reason]);
    this.name = 'AttemptAborted';
  }
}

const abortedBy = (signal: AbortSignal): AbortReason | null => (signal.reason instanceof AttemptAborted ? signal.reason.reason : null);

interface InFlight {
  claim: ClaimedDelivery;
  abort: AbortController;
  /** Aborts the attempt when its lease runs out unrenewed; re-armed by each renewal. */
  expiry: NodeJS.Timeout | undefined;
  done: Promise<void>;
  /** Set once the attempt has run longer than slowAfterMs. */
  slow: boolean;
}

export class OutboxDispatcher {
  readonly owner: string;
  private readonly db: Db;
  private readonly logger: Logger;
  private readonly leaseSeconds: number;
  private readonly attemptTimeoutSeconds: number;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly slowAfterMs: number;
  private readonly maxInFlight: number;
  private readonly pollIntervalMs: number;
  private readonly backoff: BackoffOptions;
  private readonly maxAttempts: number;
  private readonly stopTimeoutMs: number;
  private readonly metrics: Pick<Metrics, 'outboxAttempts'> | null;
  private readonly consumers = new Map<string, OutboxConsumer>();
  private readonly inFlight = new Set<InFlight>();
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  /** Set by a wake-up during a claim round, so the loop goes round again instead of sleeping. */
  private nudged = false;
  private wakeUp: (() => void) | null = null;
  private renewals: NodeJS.Timeout | null = null;
  private renewing = false;

  constructor(options: OutboxDispatcherOptions) {
    this.db = options.db;
    this.logger = options.logger;
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.leaseSeconds = options.leaseSeconds ?? 15;
    this.attemptTimeoutSeconds = options.attemptTimeoutSeconds ?? 60;
    this.batchSize = options.batchSize ?? 10;
    this.concurrency = options.concurrency ?? 20;
    this.slowAfterMs = options.slowAfterMs ?? 2000;
    this.maxInFlight = Math.max(this.concurrency, options.maxInFlight ?? 500);
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.maxAttempts = options.maxAttempts ?? 15;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 5000;
    this.metrics = options.metrics ?? null;
  }

  /** Takes the deliveries of `consumer.name` from now on; one consumer per name. */
  register(consumer: OutboxConsumer): this {
    const existing = this.consumers.get(consumer.name);
    if (existing && existing !== consumer) throw new Error(`An outbox consumer named "${consumer.name}" is already registered.`);
    this.consumers.set(consumer.name, consumer);
    this.wake();
    return this;
  }

  /** Attempts running now. */
  get busy(): number {
    return this.inFlight.size;
  }

  /** Free slots: fresh attempts fill `concurrency`, all attempts together `maxInFlight`. */
  private freeSlots(): number {
    let fresh = 0;
    for (const attempt of this.inFlight) if (!attempt.slow) fresh++;
    return Math.min(this.concurrency - fresh, this.maxInFlight - this.inFlight.size);
  }

  async start(): Promise<void> {
    if (this.loop || this.stopping.signal.aborted) return;
    // Listen before the first claim, so a delivery committed meanwhile still wakes us.
    this.unlisten = await this.db.listen(OUTBOX_CHANNEL, (consumer) => {
      if (!consumer || this.consumers.has(consumer)) this.wake();
    });
    this.loop = this.run();
    this.renewals = setInterval(() => void this.renewLeases(), (this.leaseSeconds * 1000) / 3);
    this.renewals.unref();
  }

  /** Extends the leases of the attempts still running; aborts those whose claim is gone. */
  private async renewLeases(): Promise<void> {
    const running = [...this.inFlight].filter((a) => !a.abort.signal.aborted);
    if (this.renewing || running.length === 0) return;
    this.renewing = true;
    try {
      const renewed = await renewDeliveries(
        this.db,
        running.map((a) => a.claim),
        this.leaseSeconds,
      );
      for (const attempt of running) {
        if (renewed.has(attempt.claim.id)) this.armExpiry(attempt);
        else attempt.abort.abort(new AttemptAborted('lease_lost'));
      }
    } catch (error) {
      // Each attempt still stops when its last lease runs out.
      this.logger.warn({ err: error }, 'renewing outbox leases failed; retrying');
    } finally {
      this.renewing = false;
    }
  }

  private armExpiry(attempt: InFlight): void {
    clearTimeout(attempt.expiry);
    // A renewal answered after its attempt ended arms nothing.
    if (attempt.abort.signal.aborted || !this.inFlight.has(attempt)) return;
    attempt.expiry = setTimeout(() => attempt.abort.abort(new AttemptAborted('lease_expired')), this.leaseSeconds * 1000);
  }

  /**
   * Stops claiming, aborts running attempts (they are handed back untried, due
   * at once, their attempt not counted) and waits for them, at most stopTimeoutMs.
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    // An attempt that ignores its abort keeps no lease: its delivery is free again within one.
    if (this.renewals) clearInterval(this.renewals);
    this.renewals = null;
    this.wake();
    for (const attempt of this.inFlight) attempt.abort.abort(new AttemptAborted('shutdown'));
    await this.loop;
    // The claim round in progress may have launched more before it saw the stop.
    for (const attempt of this.inFlight) attempt.abort.abort(new AttemptAborted('shutdown'));
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.stopTimeoutMs)));
    await Promise.race([Promise.allSettled([...this.inFlight].map((a) => a.done)), gaveUp]);
    clearTimeout(timer);
    if (this.inFlight.size > 0) this.logger.warn({ attempts: this.inFlight.size }, 'outbox attempts ignored their abort; their leases expire on their own');
    await this.unlisten?.().catch(() => undefined);
    this.unlisten = null;
  }

  private wake(): void {
    this.nudged = true;
    this.wakeUp?.();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wakeUp?.(), ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      this.nudged = false;
      try {
        await this.claimRound();
      } catch (error) {
        this.logger.warn({ err: error }, 'claiming outbox deliveries failed; retrying');
      }
      if (!this.nudged && !this.stopping.signal.aborted) await this.pause(this.pollIntervalMs);
    }
  }

  /** Claims while there are free slots and due deliveries. */
  private async claimRound(): Promise<void> {
    for (;;) {
      const free = this.freeSlots();
      const consumers = [...this.consumers.keys()];
      if (free <= 0 || consumers.length === 0 || this.stopping.signal.aborted) return;
      const limit = Math.min(this.batchSize, free);
      const perTargetLimits = new Map<string, number>();
      for (const consumer of this.consumers.values()) {
        if (consumer.perTargetConcurrency !== undefined) perTargetLimits.set(consumer.name, Math.max(1, Math.floor(consumer.perTargetConcurrency)));
      }
      const claimed = await claimDeliveries(this.db, { owner: this.owner, consumers, limit, leaseSeconds: this.leaseSeconds, perTargetLimits });
      for (const claim of claimed) {
        // A claim that raced with stop() is handed straight back.
        if (this.stopping.signal.aborted) await releaseDelivery(this.db, claim).catch(() => undefined);
        else this.launch(claim);
      }
      if (claimed.length < limit) return;
    }
  }

  private launch(claim: ClaimedDelivery): void {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new AttemptAborted('timeout')), this.attemptTimeoutSeconds * 1000);
    const attempt: InFlight = { claim, abort, expiry: undefined, done: Promise.resolve(), slow: false };
    // Turning slow frees a slot for other targets' deliveries.
    const slowTimer = setTimeout(() => {
      attempt.slow = true;
      this.wake();
    }, this.slowAfterMs);
    attempt.done = this.attempt(claim, abort.signal)
      .catch((error) =>
        this.logger.warn({ err: error, delivery_id: claim.id }, 'recording an outbox attempt failed; the delivery is retried when its lease expires'),
      )
      .finally(() => {
        clearTimeout(timer);
        clearTimeout(attempt.expiry);
        clearTimeout(slowTimer);
        this.inFlight.delete(attempt);
        this.wake();
      });
    this.inFlight.add(attempt);
    this.armExpiry(attempt);
  }

  private async attempt(claim: ClaimedDelivery, signal: AbortSignal): Promise<void> {
    const { leaseToken: _, ...delivery } = claim;
    const consumer = this.consumers.get(claim.consumer);
    let result: DeliveryResult;
    try {
      if (!consumer) throw new Error(`no consumer "${claim.consumer}" is registered`);
      result = await consumer.deliver(Object.freeze(delivery) as OutboxDelivery, signal);
    } catch (error) {
      const reason = abortedBy(signal);
      result = { kind: 'retry', error: reason && reason !== 'shutdown' ? this.abortError(reason) : storedError(error) };
    }
    const outcome = await this.settle(claim, result, abortedBy(signal) === 'shutdown');
    this.metrics?.outboxAttempts.inc({ consumer: claim.consumer, outcome });
    const log = this.logger.child({ delivery_id: claim.id, consumer: claim.consumer, target: claim.target, attempt: claim.attempts });
    const error = result.kind === 'delivered' ? undefined : result.error;
    switch (outcome) {
      case 'delivered':
      case 'released':
        log.debug(`outbox delivery ${outcome}`);
        return;
      case 'retry':
        log.warn({ error }, 'outbox delivery attempt failed; it is retried');
        return;
      case 'dead':
        log.warn({ error }, 'outbox delivery is dead; palai outbox redeliver puts it back');
        return;
      case 'lease_lost':
        log.warn('outbox delivery was claimed again before this attempt ended; nothing recorded');
        return;
      default: {
        const unreachable: never = outcome;
        throw new Error(`unknown attempt outcome ${String(unreachable)}`);
      }
    }
  }

  /** What an attempt cut off by the dispatcher failed with. */
  private abortError(reason: Exclude<AbortReason, 'shutdown'>): string {
    if (reason === 'timeout') return `${ABORT_MESSAGES.timeout} (${this.attemptTimeoutSeconds} s)`;
    if (reason === 'lease_expired') return `${ABORT_MESSAGES.lease_expired} (${this.leaseSeconds} s)`;
    return ABORT_MESSAGES.lease_lost;
  }

  private async settle(claim: ClaimedDelivery, result: DeliveryResult, shuttingDown: boolean): Promise<AttemptOutcome> {
    const held = (written: boolean, outcome: AttemptOutcome): AttemptOutcome => (written ? outcome : 'lease_lost');
    switch (result.kind) {
      case 'delivered':
        return held(await completeDelivery(this.db, claim), 'delivered');
      case 'dead':
        return held(await killDelivery(this.db, claim, result.error), 'dead');
      case 'retry': {
        if (shuttingDown) return held(await releaseDelivery(this.db, claim), 'released');
        if (claim.attempts >= this.maxAttempts) {
          return held(await killDelivery(this.db, claim, `gave up after ${claim.attempts} attempts: ${result.error}`), 'dead');
        }
        const delayMs = retryDelayMs(claim.attempts, this.backoff, result.retryAfterMs);
        return held(await retryDelivery(this.db, claim, result.error, delayMs), 'retry');
      }
      default: {
        // Only a consumer outside the type checker gets here.
        const unexpected: never = result;
        return this.settle(claim, { kind: 'retry', error: `the consumer returned ${String(JSON.stringify(unexpected))}` }, shuttingDown);
      }
    }
  }
}
