// /v1/queue_consumers: the project's SQS and Kafka job sources. Credentials are
// write-only: an answer shows only which kind is stored and a last four.
import type { KernelApi } from '../../../core/api/index.js';
import type { OperationHandlers } from '../operations.js';

export function queueConsumerHandlers({ queues }: KernelApi): OperationHandlers {
  return {
    createQueueConsumer: async (_req, res, { projectId, body, idempotency }) => {
      res.status(201).json(await queues.create(projectId, body, { idempotency }));
    },
    listQueueConsumers: async (_req, res, { projectId, query }) => {
      res.json(await queues.list(projectId, query));
    },
    getQueueConsumer: async (_req, res, { projectId, params }) => {
      res.json(await queues.get(projectId, params.queue_consumer));
    },
    updateQueueConsumer: async (_req, res, { projectId, params, body }) => {
      res.json(await queues.update(projectId, params.queue_consumer, body));
    },
    deleteQueueConsumer: async (_req, res, { projectId, params }) => {
      const id = await queues.delete(projectId, params.queue_consumer);
      res.json({ id, object: 'queue_consumer.deleted', deleted: true });
    },
  };
}
