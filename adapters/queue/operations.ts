// /v1/queue_consumers: the project's SQS and Kafka job sources. Credentials are
// write-only: an answer shows only which kind is stored and a last four.
import type { SurfaceOperations } from '../../core/api/surface.js';
import type { QueueApi } from '../../core/surfaces/queue/queue-api.js';

export function queueConsumerOperations({ queues }: QueueApi): SurfaceOperations {
  return {
    createQueueConsumer: async ({ projectId, body, idempotency }) => ({ status: 201, body: await queues.create(projectId, body, { idempotency }) }),
    listQueueConsumers: async ({ projectId, query }) => ({ body: await queues.list(projectId, query) }),
    getQueueConsumer: async ({ projectId, params }) => ({ body: await queues.get(projectId, params.queue_consumer) }),
    updateQueueConsumer: async ({ projectId, params, body }) => ({ body: await queues.update(projectId, params.queue_consumer, body) }),
    deleteQueueConsumer: async ({ projectId, params }) => {
      const id = await queues.delete(projectId, params.queue_consumer);
      return { body: { id, object: 'queue_consumer.deleted', deleted: true } };
    },
  };
}
