// The body of a webhook delivery (protocols/webhook-event.schema.json). A status
// announcement becomes `response.<status>` with the response as the kernel
// journaled it in that very event, read back from the journal, so every attempt
// carries the same body. A direct delivery (a test event) carries its own body.
import type { WebhookEvent } from '../../generated/protocol-schemas.js';
import type { WebhooksSurfaceApi } from '../../core/surfaces/webhooks/webhooks-api.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { OutboxDelivery, StatusAnnouncement } from '../../core/outbox/outbox-port.js';
import { webhookEventTypeOf } from '../../core/surfaces/webhooks/webhook-port.js';

/** Why a delivery can never be made (its response is gone, it announces nothing a webhook sends). */
export class UndeliverableError extends Error {}

export async function webhookEvent(api: WebhooksSurfaceApi, delivery: OutboxDelivery): Promise<WebhookEvent> {
  if (delivery.subscriptionId === null) return delivery.payload as WebhookEvent;
  const announcement = delivery.payload as unknown as StatusAnnouncement;
  const type = webhookEventTypeOf(announcement.status);
  if (!type) throw new UndeliverableError(`status ${announcement.status} is not announced to webhooks`);
  let entries;
  try {
    entries = await api.responses.events(delivery.projectId, announcement.response_id, announcement.sequence - 1, 1);
  } catch (error) {
    if (error instanceof PalaiError && error.slug === 'not-found') throw new UndeliverableError(`response ${announcement.response_id} was deleted`);
    throw error;
  }
  const event = entries[0]?.event;
  if (!event || event.type !== 'status' || entries[0].sequence !== announcement.sequence) {
    throw new UndeliverableError(`response ${announcement.response_id} has no status event ${announcement.sequence}`);
  }
  return { type, timestamp: delivery.createdAt.toISOString(), data: { response: event.response, sequence: announcement.sequence } };
}
