// Backpressure: while the kernel has more responses admitted and not yet
// started than the configured depth, consumers take no new messages (SQS stops
// receiving, Kafka pauses its partitions). The backlog is read once a second
// for the whole process, not by each consumer; what this process admitted since
// the last reading counts too, so a fast consumer cannot overshoot in between.
import type { QueueSurfaceApi } from '../../core/surfaces/queue/queue-api.js';
import type { Logger } from '../../core/logger.js';

export class Backpressure {
  private engagedNow = false;
  private backlog = 0;
  private admittedSinceReading = 0;
  private timer: NodeJS.Timeout | null = null;
  private waiters = new Set<() => void>();

  constructor(
    private readonly api: QueueSurfaceApi,
    private readonly logger: Logger,
    /** Backlog depth above which consumers stop taking messages; 0 turns backpressure off. */
    private readonly maxBacklog: number,
    private readonly intervalMs = 1000,
  ) {}

  get engaged(): boolean {
    return this.engagedNow;
  }

  start(): void {
    if (this.maxBacklog <= 0 || this.timer) return;
    const tick = async () => {
      try {
        const admittedBefore = this.admittedSinceReading;
        this.backlog = await this.api.queues.backlog();
        // Admissions that committed during the reading are in it already, or will be in the next one.
        this.admittedSinceReading -= admittedBefore;
        this.update();
      } catch (error) {
        this.logger.warn({ err: error }, 'reading the backlog for queue backpressure failed');
      }
      if (this.timer) this.timer = setTimeout(tick, this.intervalMs).unref();
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.backlog = 0;
    this.admittedSinceReading = 0;
    this.update();
  }

  /** A consumer of this process admitted a job: it counts until the next reading. */
  noteAdmitted(): void {
    if (!this.timer) return;
    this.admittedSinceReading++;
    this.update();
  }

  /** Resolves when backpressure is released (at once if it is not engaged) or `signal` aborts. */
  released(signal: AbortSignal): Promise<void> {
    if (!this.engagedNow || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private update(): void {
    const engaged = this.timer !== null && this.backlog + this.admittedSinceReading > this.maxBacklog;
    if (engaged === this.engagedNow) return;
    this.engagedNow = engaged;
    this.logger.info({ engaged }, engaged ? 'queue backpressure engaged: the backlog is above PALAI_QUEUE_MAX_BACKLOG' : 'queue backpressure released');
    if (!engaged) for (const waiter of [...this.waiters]) waiter();
  }
}
