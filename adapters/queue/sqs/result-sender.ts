// Sends job results to SQS reply queues, with one client per consumer (made
// again when the consumer changes). The message attributes carry the
// correlation: the job's idempotency key, the response id and status, and the
// outbox delivery id, which is also a FIFO reply queue's deduplication id.
import { SendMessageCommand, type MessageAttributeValue, type SQSClient } from '@aws-sdk/client-sqs';
import type { QueueSurfaceApi } from '../../../core/surfaces/queue/queue-api.js';
import type { QueueConsumerConfig } from '../../../core/surfaces/queue/queue-port.js';
import type { ResultSender } from '../runner.js';
import { sqsClient } from './client.js';

const SEND_TIMEOUT_MS = 15_000;

const text = (value: string): MessageAttributeValue => ({ DataType: 'String', StringValue: value });

export function sqsResultSender(api: QueueSurfaceApi): ResultSender {
  const clients = new Map<string, { version: number; client: SQSClient }>();
  const clientFor = (config: Extract<QueueConsumerConfig, { kind: 'sqs' }>): SQSClient => {
    const cached = clients.get(config.id);
    if (cached && cached.version === config.updatedAt.getTime()) return cached.client;
    cached?.client.destroy();
    const client = sqsClient(api, config, SEND_TIMEOUT_MS);
    clients.set(config.id, { version: config.updatedAt.getTime(), client });
    return client;
  };
  return {
    async send(config, replyTo, result, deliveryId, signal) {
      if (config.kind !== 'sqs') throw new Error(`consumer ${config.id} is not an SQS consumer`);
      await clientFor(config).send(
        new SendMessageCommand({
          QueueUrl: replyTo,
          MessageBody: JSON.stringify(result),
          MessageAttributes: {
            ...(result.idempotency_key !== null ? { 'palai-idempotency-key': text(result.idempotency_key) } : {}),
            'palai-response-id': text(result.response_id),
            'palai-status': text(result.status),
            'palai-delivery-id': text(deliveryId),
          },
          ...(replyTo.endsWith('.fifo') ? { MessageGroupId: result.idempotency_key ?? result.response_id, MessageDeduplicationId: deliveryId } : {}),
        }),
        { abortSignal: signal },
      );
    },
    async close() {
      for (const { client } of clients.values()) client.destroy();
      clients.clear();
    },
  };
}
