// What every broker's consumer provides to the supervisor, and what it is given.
// A runner takes one consumer's messages: each is admitted through the kernel
// (api.queues.admit) before it is acknowledged, invalid ones are dead-lettered
// with the reason, and nothing is acknowledged that was not admitted.
import type { QueueSurfaceApi } from '../../core/surfaces/queue/queue-api.js';
import type { QueueResult } from '../../generated/protocol-schemas.js';
import type { Logger } from '../../core/logger.js';
import type { QueueConsumerConfig } from '../../core/surfaces/queue/queue-port.js';
import type { Backpressure } from './backpressure.js';
import type { ConsumerHealth } from './health.js';

export interface QueueRunner {
  /** Starts taking messages; resolves once it has connected, rejects when it cannot. */
  start(): Promise<void>;
  /** Stops taking messages, finishes admitting what it holds, acknowledges those, and disconnects. */
  stop(): Promise<void>;
}

export interface RunnerDeps {
  api: QueueSurfaceApi;
  logger: Logger;
  /** Engaged while the kernel's backlog is above the configured depth: take no new messages. */
  backpressure: Backpressure;
  /** Where the runner says whether it reaches its source (the supervisor also reports its start). */
  health: ConsumerHealth;
}

export type RunnerFactory = (config: QueueConsumerConfig, deps: RunnerDeps) => QueueRunner;

/** Sends job results to one kind of broker, reusing connections per consumer. */
export interface ResultSender {
  /**
   * Sends `result` to `replyTo` (a queue URL or topic) on the consumer's broker.
   * `deliveryId` is the same on every attempt (SQS FIFO deduplication id, a Kafka header).
   * Throws on failure; the outbox retries.
   */
  send(config: QueueConsumerConfig, replyTo: string, result: QueueResult, deliveryId: string, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** Metric labels and counters for one consumer. */
export function consumerMetrics(api: QueueSurfaceApi, config: QueueConsumerConfig) {
  const consumer = config.id;
  const m = api.metrics;
  return {
    count: (outcome: 'received' | 'admitted' | 'duplicate' | 'dead_lettered' | 'failed', n = 1) => m.queueMessages.inc({ consumer, outcome }, n),
    inFlight: (n: number) => m.queueInFlight.set({ consumer }, n),
    lag: (n: number) => m.queueLag.set({ consumer }, n),
    depth: (n: number) => m.queueSourceDepth.set({ consumer }, n),
    forget: () => {
      for (const gauge of [m.queueInFlight, m.queueLag, m.queueSourceDepth]) gauge.remove({ consumer });
    },
  };
}
