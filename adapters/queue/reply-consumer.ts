// The outbox consumer that sends job results (`queue_reply`): each delivery
// announces a status of a job's response; the result is built from the journal
// event, so every attempt sends the same body, and goes to the job's reply
// queue or topic on its consumer's broker. At least once: a receiver tells
// repeats apart by response id and status (SQS FIFO also deduplicates on the
// delivery id).
import type { QueueSurfaceApi } from '../../core/surfaces/queue/queue-api.js';
import type { DeliveryResult, OutboxConsumer, OutboxDelivery, StatusAnnouncement } from '../../core/outbox/outbox-port.js';
import { storedError } from '../../core/outbox/outbox-port.js';
import { QUEUE_REPLY_CONSUMER, type QueueConsumerConfig } from '../../core/surfaces/queue/queue-port.js';
import type { ResultSender } from './runner.js';

export function queueReplyConsumer(
  api: QueueSurfaceApi,
  senders: Record<QueueConsumerConfig['kind'], ResultSender>,
): OutboxConsumer & { close(): Promise<void> } {
  return {
    name: QUEUE_REPLY_CONSUMER,
    // One slow reply destination must not hold up the others.
    perTargetConcurrency: 8,
    async deliver(delivery: OutboxDelivery, signal: AbortSignal): Promise<DeliveryResult> {
      const announcement = delivery.payload as unknown as StatusAnnouncement;
      const job = await api.queues.result(delivery.projectId, announcement);
      if (!job) return { kind: 'dead', error: `the result of response ${announcement.response_id} can no longer be built (the response was deleted)` };
      const config = await api.queues.config(delivery.projectId, job.consumerId);
      if (!config) return { kind: 'dead', error: `queue consumer ${job.consumerId} was deleted; the result has nowhere to go` };
      try {
        await senders[config.kind].send(config, job.replyTo, job.result, delivery.id, signal);
        return { kind: 'delivered' };
      } catch (error) {
        return { kind: 'retry', error: `sending the result to ${job.replyTo} failed: ${storedError(error)}` };
      }
    },
    async close() {
      await Promise.all(Object.values(senders).map((s) => s.close().catch(() => undefined)));
    },
  };
}
