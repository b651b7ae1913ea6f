// Runs the store's queue consumers in this process: every consumer that is not
// paused, each by its broker's runner. A change to a consumer (NOTIFY) or the
// periodic refresh restarts, starts or stops runners to match the store. Every
// process with the consumers role runs every consumer: SQS shares a queue among
// its receivers, and Kafka shares a topic's partitions within the group.
// Whether each runner reaches its source is kept per consumer version
// (ConsumerHealth), across the retries of a runner that could not start.
import type { QueueSurfaceApi } from '../../core/surfaces/queue/queue-api.js';
import type { Logger } from '../../core/logger.js';
import type { QueueConsumerConfig } from '../../core/surfaces/queue/queue-port.js';
import { Backpressure } from './backpressure.js';
import { ConsumerHealth, sourceName } from './health.js';
import type { QueueRunner, RunnerFactory } from './runner.js';

export interface QueueSupervisorOptions {
  /** The runner for each kind of consumer. */
  runners: Record<QueueConsumerConfig['kind'], RunnerFactory>;
  /** Backlog depth above which consumers pause; 0: never. */
  maxBacklog: number;
  /** How often the store is read again when no change is heard. Default 10 s. */
  refreshMs?: number;
  /** How long a runner that failed to start waits before the next try. Default 5 s. */
  retryMs?: number;
}

interface Running {
  version: number;
  runner: QueueRunner;
  started: Promise<void>;
}

export class QueueSupervisor {
  private readonly logger: Logger;
  private readonly backpressure: Backpressure;
  private readonly running = new Map<string, Running>();
  private readonly health = new Map<string, { version: number; health: ConsumerHealth }>();
  private unlisten: (() => Promise<void>) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> = Promise.resolve();
  private stopped = false;
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly api: QueueSurfaceApi,
    private readonly options: QueueSupervisorOptions,
  ) {
    this.logger = api.logger.child({ component: 'queue' });
    this.backpressure = new Backpressure(api, this.logger, options.maxBacklog);
  }

  /** Whether this process's consumers are holding back for the kernel's backlog now. */
  get backpressureEngaged(): boolean {
    return this.backpressure.engaged;
  }

  /** Consumers running in this process now. */
  get consumers(): string[] {
    return [...this.running.keys()];
  }

  async start(): Promise<void> {
    this.unlisten = await this.api.queues.onChange(() => this.sync());
    await this.sync();
    const refresh = () => {
      if (this.stopped) return;
      this.sync();
      this.timer = setTimeout(refresh, this.options.refreshMs ?? 10_000).unref();
    };
    this.timer = setTimeout(refresh, this.options.refreshMs ?? 10_000).unref();
  }

  /** Stops every runner: each stops taking messages, admits what it holds, acknowledges, and leaves. */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.unlisten?.().catch(() => undefined);
    await this.syncing;
    this.backpressure.stop();
    await Promise.all([...this.running.keys()].map((id) => this.stopRunner(id)));
  }

  /** Brings the runners in line with the store; calls queue behind each other. */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(() => this.syncOnce()).catch((error) => this.logger.warn({ err: error }, 'reading the queue consumers failed; retrying'));
    return this.syncing;
  }

  private async syncOnce(): Promise<void> {
    if (this.stopped) return;
    const wanted = new Map((await this.api.queues.runnable()).map((c) => [c.id, c]));
    for (const [id, running] of this.running) {
      const config = wanted.get(id);
      if (!config || config.updatedAt.getTime() !== running.version) await this.stopRunner(id);
    }
    for (const id of this.health.keys()) if (!wanted.has(id)) this.health.delete(id);
    for (const config of wanted.values()) {
      if (!this.running.has(config.id) && !this.stopped) this.startRunner(config);
    }
    // The backlog is only read while some consumer could pause for it.
    if (this.running.size > 0) this.backpressure.start();
    else this.backpressure.stop();
  }

  /** The health of this version of the consumer: the same one through every retry of its start. */
  private healthOf(config: QueueConsumerConfig, logger: Logger): ConsumerHealth {
    const version = config.updatedAt.getTime();
    const known = this.health.get(config.id);
    if (known?.version === version) return known.health;
    const health = new ConsumerHealth(this.api, config, logger);
    this.health.set(config.id, { version, health });
    return health;
  }

  private startRunner(config: QueueConsumerConfig): void {
    const logger = this.logger.child({ consumer: config.id, kind: config.kind });
    const health = this.healthOf(config, logger);
    const runner = this.options.runners[config.kind](config, { api: this.api, logger, backpressure: this.backpressure, health });
    const entry: Running = { version: config.updatedAt.getTime(), runner, started: Promise.resolve() };
    const retryMs = this.options.retryMs ?? 5000;
    entry.started = runner.start().then(
      () => health.running(),
      async (error) => {
        await health.failing(`starting the consumer of ${sourceName(config)}`, error, retryMs);
        await runner.stop().catch(() => undefined);
        // Forgotten after a pause, so the next sync starts it afresh.
        setTimeout(() => {
          if (this.running.get(config.id) === entry) this.running.delete(config.id);
          this.sync();
        }, retryMs).unref();
      },
    );
    this.running.set(config.id, entry);
  }

  private async stopRunner(id: string): Promise<void> {
    const entry = this.running.get(id);
    if (!entry) return;
    this.running.delete(id);
    await entry.started;
    await entry.runner.stop().catch((error) => this.logger.warn({ err: error, consumer: id }, 'stopping a queue consumer failed'));
  }
}
