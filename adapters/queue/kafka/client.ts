// The kafkajs client for one consumer: its brokers, TLS and SASL, a socket
// factory whose every connection passes Palai's egress guard, and kafkajs's
// own log lines (warnings and errors only) in Palai's log.
import { Kafka, logLevel, Partitioners, type LogEntry, type Producer, type SASLOptions } from 'kafkajs';
import type { QueueSurfaceApi } from '../../../core/surfaces/queue/queue-api.js';
import type { Logger } from '../../../core/logger.js';
import type { QueueConsumerConfig } from '../../../core/surfaces/queue/queue-port.js';
import { guardedSocketFactory } from '../egress-sockets.js';

export type KafkaConsumerConfig = Extract<QueueConsumerConfig, { kind: 'kafka' }>;

/** kafkajs log lines as structured warnings and errors; the entry's own fields stay out (they can be large). */
function logCreator(logger: Logger) {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, error, groupId, broker, retryCount } = log as Record<string, unknown>;
      const fields = { kafkajs: namespace, error, groupId, broker, retryCount };
      if (level === logLevel.ERROR) logger.error(fields, `kafkajs: ${String(message)}`);
      else if (level === logLevel.WARN) logger.warn(fields, `kafkajs: ${String(message)}`);
    };
}

export function kafkaClient(api: QueueSurfaceApi, config: KafkaConsumerConfig, logger: Logger, role: 'consumer' | 'producer'): Kafka {
  const sasl: SASLOptions | undefined = config.sasl
    ? { mechanism: config.sasl.mechanism, username: config.sasl.username, password: config.sasl.password }
    : undefined;
  return new Kafka({
    clientId: `palai-${config.id}-${role}`,
    brokers: config.kafka.brokers,
    ssl: config.kafka.ssl ?? false,
    ...(sasl ? { sasl } : {}),
    socketFactory: guardedSocketFactory(api.egressSockets),
    connectionTimeout: 3000,
    requestTimeout: 30_000,
    // Retries back off to at most 5 s (kafkajs: 30 s), so a consumer is back soon after its broker is.
    retry: { initialRetryTime: 300, maxRetryTime: 5000 },
    logLevel: logLevel.WARN,
    logCreator: logCreator(logger),
  });
}

/**
 * A producer that writes each record once even when kafkajs retries a send
 * (idempotent, one request in flight, acknowledged by every in-sync replica).
 */
export function idempotentProducer(kafka: Kafka): Producer {
  return kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: true });
}
