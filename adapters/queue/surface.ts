// The queue surface as a module of the hub: the SQS and Kafka consumers that
// take jobs (roles consumers and all; an intake, stopped first so what they
// hold is admitted and acknowledged while the store is open), the result
// sender behind the `queue_reply` outbox consumer, and the consumers' REST
// resources. Broker SDKs load with the first consumer or result of their kind.
import { INTAKE_ROLES, type SurfaceModule } from '../../core/api/index.js';
import type { QueueSurfaceApi } from '../../core/surfaces/queue/queue-api.js';
import { lazyResultSender, lazyRunner } from './lazy.js';
import { queueConsumerOperations } from './operations.js';
import { queueReplyConsumer } from './reply-consumer.js';
import { QueueSupervisor } from './supervisor.js';

export interface QueueSurface extends SurfaceModule {
  /** Runs the consumers where this process takes queue work. */
  readonly supervisor: QueueSupervisor;
}

export function queueSurface(api: QueueSurfaceApi): QueueSurface {
  const supervisor = new QueueSupervisor(api, {
    runners: {
      sqs: lazyRunner(async () => (await import('./sqs/runner.js')).sqsRunner),
      kafka: lazyRunner(async () => (await import('./kafka/runner.js')).kafkaRunner),
    },
    maxBacklog: api.config.queueMaxBacklog,
  });
  const replies = queueReplyConsumer(api, {
    sqs: lazyResultSender(api, async () => (await import('./sqs/result-sender.js')).sqsResultSender),
    kafka: lazyResultSender(api, async () => (await import('./kafka/result-sender.js')).kafkaResultSender),
  });
  return {
    name: 'queue',
    supervisor,
    operations: queueConsumerOperations(api),
    outboxConsumers: [replies],
    loops: [{ name: 'queue-consumers', roles: INTAKE_ROLES, intake: true, start: () => supervisor.start(), stop: () => supervisor.stop() }],
    close: () => replies.close(),
  };
}
