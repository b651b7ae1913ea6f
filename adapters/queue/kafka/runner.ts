// The Kafka consumer of the queue surface: one consumer group member on the
// consumer's topic. Each partition's records are taken one after another
// (different partitions at once, up to max_in_flight), each admitted or passed
// on (record-admission.ts) before the offset after it is committed by hand, so
// a record is never committed unadmitted: a crash, a stop or a rebalance only
// means redeliveries, which admission dedupes.
//
// While backpressure is engaged the topic is paused (a record not yet taken is
// fetched again on resume). kafkajs reconnects and rejoins by itself; when its
// consumer crashes for good, this runner starts a new one, backing off.
import type { Consumer, EachBatchPayload, Producer } from 'kafkajs';
import type { Logger } from '../../../core/logger.js';
import type { QueueConsumerConfig } from '../../../core/surfaces/queue/queue-port.js';
import { consumerMetrics, type QueueRunner, type RunnerDeps, type RunnerFactory } from '../runner.js';
import { idempotentProducer, kafkaClient, type KafkaConsumerConfig } from './client.js';
import { bounded, Backoff } from './timing.js';
import { takeRecord, type RecordContext } from './record-admission.js';

/** How long stop() waits for kafkajs to finish and leave the group before it gives up (uncommitted records come again). */
const STOP_TIMEOUT_MS = 10_000;
/** A batch commits at least this often, so a long batch does not hold back its progress. */
const COMMIT_EVERY_MS = 1000;

class KafkaRunner implements QueueRunner {
  private readonly logger: Logger;
  private readonly metrics: ReturnType<typeof consumerMetrics>;
  private readonly stopping = new AbortController();
  private readonly restarts = new Backoff(1000, 30_000);
  private consumer: Consumer | null = null;
  private producer: Promise<Producer> | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private restarting: Promise<unknown> | null = null;
  /** The partitions this member holds since its last join; nothing else is committed. */
  private held = new Set<number>();
  private readonly lag = new Map<number, bigint>();
  private inFlight = 0;
  /** The consumer paused for backpressure, until it is released. */
  private pausedConsumer: Consumer | null = null;
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly config: KafkaConsumerConfig,
    private readonly deps: RunnerDeps,
  ) {
    this.logger = deps.logger;
    this.metrics = consumerMetrics(deps.api, config);
  }

  private get topic(): string {
    return this.config.kafka.topic;
  }

  async start(): Promise<void> {
    if (!this.config.deadLetter?.topic) throw new Error('a Kafka consumer needs a dead-letter topic for the records that can never be jobs');
    await this.startConsumer();
  }

  stop(): Promise<void> {
    this.stopped ??= this.shutDown();
    return this.stopped;
  }

  private async shutDown(): Promise<void> {
    this.stopping.abort();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    await this.restarting;
    // kafkajs's disconnect waits for the batches being taken (each admits what it holds and commits), then leaves the group.
    const consumer = this.consumer;
    this.consumer = null;
    if (consumer)
      await bounded(consumer.disconnect(), STOP_TIMEOUT_MS, () =>
        this.logger.warn('the Kafka consumer did not leave its group in time; its uncommitted records come again'),
      );
    const producer = this.producer;
    this.producer = null;
    if (producer)
      await bounded(
        producer.then((p) => p.disconnect()),
        STOP_TIMEOUT_MS,
        () => undefined,
      );
    this.metrics.forget();
  }

  /** A new kafkajs consumer, connected, subscribed and running; rejects when it cannot join. */
  private async startConsumer(): Promise<void> {
    const consumer = kafkaClient(this.deps.api, this.config, this.logger, 'consumer').consumer({
      groupId: this.config.kafka.group_id,
      // A member that vanished (a killed process) gives its partitions up within 10 s.
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
      // Short fetch waits: a pause, a resume or a stop takes effect soon.
      maxWaitTimeInMs: 500,
    });
    let starting = true;
    let crashedWhileStarting: Error | null = null;
    const { CRASH, GROUP_JOIN } = consumer.events;
    consumer.on(GROUP_JOIN, ({ payload }) => {
      this.held = new Set(payload.memberAssignment[this.topic] ?? []);
      for (const partition of this.lag.keys()) if (!this.held.has(partition)) this.lag.delete(partition);
      this.reportLag();
      this.restarts.reset();
      void this.deps.health.running();
    });
    consumer.on(CRASH, ({ payload }) => {
      // With restart: true kafkajs starts the consumer again by itself.
      if (starting) crashedWhileStarting = payload.error;
      else if (!payload.restart && this.consumer === consumer) {
        this.consumer = null;
        this.scheduleRestart(payload.error);
      }
    });
    try {
      await consumer.connect();
      // A new group takes the topic from its start: a job produced before the consumer existed is not lost.
      await consumer.subscribe({ topic: this.topic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: Math.max(1, this.config.maxInFlight),
        eachBatch: (payload) => this.takeBatch(consumer, payload),
      });
      if (crashedWhileStarting) throw crashedWhileStarting;
      if (this.stopping.signal.aborted) throw new Error('the runner stopped while its Kafka consumer started');
      this.consumer = consumer;
    } catch (error) {
      await bounded(consumer.disconnect(), STOP_TIMEOUT_MS, () => undefined);
      throw error;
    } finally {
      starting = false;
    }
  }

  /** kafkajs gave its consumer up (a non-retriable error): a new one starts, backing off, until the runner stops. */
  private scheduleRestart(error: unknown): void {
    if (this.stopping.signal.aborted) return;
    const delay = this.restarts.next();
    void this.deps.health.failing(`running the Kafka consumer of topic ${this.topic}`, error, delay);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.restarting = this.startConsumer()
        .catch((startError) => this.scheduleRestart(startError))
        .finally(() => (this.restarting = null));
    }, delay);
  }

  /** One fetched batch of one partition, record after record, committing as it goes. */
  private async takeBatch(consumer: Consumer, payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale, commitOffsetsIfNecessary } = payload;
    const { partition } = batch;
    const context: RecordContext = {
      api: this.deps.api,
      config: this.config,
      logger: this.logger,
      metrics: this.metrics,
      producer: () => this.producerFor(),
      stopping: this.stopping.signal,
      heartbeat,
      noteAdmitted: () => this.deps.backpressure.noteAdmitted(),
    };
    let taken: string | null = null;
    let committed: string | null = null;
    let lastCommit = Date.now();
    const commit = async () => {
      if (taken === null || taken === committed) return;
      committed = taken;
      lastCommit = Date.now();
      await this.commit(commitOffsetsIfNecessary, partition, (BigInt(taken) + 1n).toString());
    };
    try {
      for (const message of batch.messages) {
        if (!isRunning() || isStale() || this.stopping.signal.aborted) break;
        if (this.deps.backpressure.engaged) {
          this.pauseForBackpressure(consumer);
          break;
        }
        this.setInFlight(+1);
        let outcome;
        try {
          outcome = await takeRecord(context, { topic: batch.topic, partition, offset: message.offset }, message);
        } finally {
          this.setInFlight(-1);
        }
        if (outcome === 'later') break;
        resolveOffset(message.offset);
        taken = message.offset;
        if (Date.now() - lastCommit >= COMMIT_EVERY_MS) await commit();
        await heartbeat();
      }
    } finally {
      await commit();
      if (taken !== null) {
        this.lag.set(partition, BigInt(batch.highWatermark) - BigInt(taken) - 1n);
        this.reportLag();
      }
    }
  }

  /**
   * Commits `offset` for `partition` while this member holds it. A commit the
   * group refuses (it rebalanced meanwhile) is only logged: the partition's
   * next owner takes the records again, and admission finds them admitted.
   */
  private async commit(commitOffsets: EachBatchPayload['commitOffsetsIfNecessary'], partition: number, offset: string): Promise<void> {
    if (!this.held.has(partition)) return;
    try {
      await commitOffsets({ topics: [{ topic: this.topic, partitions: [{ partition, offset }] }] });
    } catch (error) {
      this.logger.info({ err: error, partition, offset }, 'committing a Kafka offset failed; the records after the last commit come again');
    }
  }

  /**
   * Pauses the topic until backpressure is released. Paused again on every
   * batch that comes meanwhile: kafkajs forgets a pause when it restarts its
   * consumer group by itself.
   */
  private pauseForBackpressure(consumer: Consumer): void {
    const topics = [{ topic: this.topic }];
    try {
      consumer.pause(topics);
    } catch (error) {
      this.logger.debug({ err: error }, 'pausing the Kafka consumer failed');
    }
    if (this.pausedConsumer === consumer) return;
    this.pausedConsumer = consumer;
    this.deps.backpressure.released(this.stopping.signal).then(() => {
      if (this.pausedConsumer === consumer) this.pausedConsumer = null;
      if (this.stopping.signal.aborted) return;
      try {
        consumer.resume(topics);
      } catch (error) {
        // Not running any more (it crashed): its successor starts unpaused.
        this.logger.debug({ err: error }, 'resuming the Kafka consumer failed');
      }
    });
  }

  private producerFor(): Promise<Producer> {
    if (!this.producer) {
      const connecting = (async () => {
        const producer = idempotentProducer(kafkaClient(this.deps.api, this.config, this.logger, 'producer'));
        await producer.connect();
        return producer;
      })();
      this.producer = connecting;
      // A failed connection is not kept: the next record tries a new one.
      connecting.catch(() => {
        if (this.producer === connecting) this.producer = null;
      });
    }
    return this.producer;
  }

  private setInFlight(change: number): void {
    this.inFlight += change;
    this.metrics.inFlight(this.inFlight);
  }

  private reportLag(): void {
    let sum = 0n;
    for (const [partition, lag] of this.lag) if (this.held.has(partition)) sum += lag > 0n ? lag : 0n;
    this.metrics.lag(Number(sum));
  }
}

export const kafkaRunner: RunnerFactory = (config: QueueConsumerConfig, deps: RunnerDeps) => {
  if (config.kind !== 'kafka') throw new Error(`the Kafka runner cannot run a ${config.kind} consumer`);
  return new KafkaRunner(config, deps);
};
