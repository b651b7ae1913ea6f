// Sends job results to Kafka topics: one idempotent producer per consumer
// (connected on first use, replaced when the consumer changes), the job's
// idempotency key as the record key (its response id without one), and
// headers a receiver can tell repeats apart by.
import type { Producer } from 'kafkajs';
import type { QueueSurfaceApi } from '../../../core/surfaces/queue/queue-api.js';
import type { QueueConsumerConfig } from '../../../core/surfaces/queue/queue-port.js';
import type { QueueResult } from '../../../generated/protocol-schemas.js';
import type { ResultSender } from '../runner.js';
import { idempotentProducer, kafkaClient } from './client.js';

interface CachedProducer {
  version: number;
  producer: Producer;
  connected: Promise<void>;
}

/** Resolves with `work`, or rejects with the signal's reason once it aborts. */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

export function kafkaResultSender(api: QueueSurfaceApi): ResultSender {
  const logger = api.logger.child({ component: 'queue', kind: 'kafka' });
  const producers = new Map<string, CachedProducer>();

  function producerFor(config: Extract<QueueConsumerConfig, { kind: 'kafka' }>): CachedProducer {
    const version = config.updatedAt.getTime();
    const cached = producers.get(config.id);
    if (cached && cached.version === version) return cached;
    // The consumer changed (its brokers or credentials may have): its old producer goes.
    if (cached) cached.producer.disconnect().catch(() => undefined);
    const producer = idempotentProducer(kafkaClient(api, config, logger.child({ consumer: config.id }), 'producer'));
    const entry: CachedProducer = { version, producer, connected: producer.connect() };
    // A failed connection is not kept: the outbox's next attempt connects anew.
    entry.connected.catch(() => {
      if (producers.get(config.id) === entry) producers.delete(config.id);
    });
    producers.set(config.id, entry);
    return entry;
  }

  return {
    async send(config, replyTo, result: QueueResult, deliveryId, signal) {
      if (config.kind !== 'kafka') throw new Error(`the Kafka result sender cannot send for a ${config.kind} consumer`);
      const { producer, connected } = producerFor(config);
      await abortable(connected, signal);
      await abortable(
        producer.send({
          topic: replyTo,
          messages: [
            {
              key: result.idempotency_key ?? result.response_id,
              value: JSON.stringify(result),
              headers: { 'palai-delivery-id': deliveryId, 'palai-response-id': result.response_id, 'palai-status': result.status },
            },
          ],
        }),
        signal,
      );
    },
    async close() {
      const all = [...producers.values()];
      producers.clear();
      await Promise.all(all.map((entry) => entry.producer.disconnect().catch(() => undefined)));
    },
  };
}
