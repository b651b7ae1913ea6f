import type { KernelApi } from '../../../core/api/index.js';
import { PalaiError } from '../../../core/errors/palai-error.js';
import type { DeliveryRecord, DeliveryStatus } from '../../../core/outbox/outbox-port.js';
import type { OutboxDelivery, OutboxDeliveryList } from '../../../generated/schemas.js';
import type { OperationHandlers } from '../operations.js';

const seconds = (date: Date | null): number | null => (date ? Math.floor(date.getTime() / 1000) : null);

/** A delivery as the API shows it: its state, never its payload. */
function deliveryView(record: DeliveryRecord): OutboxDelivery {
  return {
    id: record.id,
    object: 'outbox_delivery',
    consumer: record.consumer,
    target: record.target,
    response_id: record.responseId,
    status: record.status,
    attempts: record.attempts,
    next_attempt_at: record.status === 'pending' ? seconds(record.nextAttemptAt) : null,
    last_error: record.lastError,
    created_at: seconds(record.createdAt)!,
    delivered_at: seconds(record.deliveredAt),
    dead_at: seconds(record.deadAt),
  };
}

/** /v1/outbox_deliveries: the project's outbound deliveries of every kind, and putting one back. */
export function outboxHandlers({ outbox }: KernelApi): OperationHandlers {
  const required = async (projectId: string, id: string): Promise<DeliveryRecord> => {
    const record = await outbox.delivery(projectId, id);
    if (!record) throw new PalaiError('not-found', `No delivery ${JSON.stringify(id)}.`);
    return record;
  };
  return {
    listOutboxDeliveries: async (_req, res, { projectId, query }) => {
      const limit = (query.limit as number | undefined) ?? 20;
      // One more than the page tells whether another page follows.
      const records = await outbox.deliveries(projectId, {
        limit: limit + 1,
        status: query.status as DeliveryStatus | undefined,
        consumer: query.consumer as string | undefined,
        before: query.after as string | undefined,
      });
      const data = records.slice(0, limit).map(deliveryView);
      const page: OutboxDeliveryList = {
        object: 'list',
        data,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        has_more: records.length > limit,
      };
      res.json(page);
    },
    getOutboxDelivery: async (_req, res, { projectId, params }) => {
      res.json(deliveryView(await required(projectId, params.delivery)));
    },
    redeliverOutboxDelivery: async (_req, res, { projectId, params, idempotency, replay }) => {
      // A repeat answers with the delivery as it is now; it is not put back twice.
      if (replay) return void res.status(202).json(deliveryView(await required(projectId, replay.resourceId)));
      const outcome = await outbox.redeliver(projectId, params.delivery, { idempotency });
      if (outcome === 'not_found') throw new PalaiError('not-found', `No delivery ${JSON.stringify(params.delivery)}.`);
      if (outcome === 'pending') throw new PalaiError('invalid-state', `Delivery ${params.delivery} is still pending: it is being tried, and is not put back.`);
      res.status(202).json(deliveryView(await required(projectId, params.delivery)));
    },
  };
}
