// The webhook surface as a module of the hub: the `webhook` outbox consumer
// that signs and sends each delivery, and the endpoints' REST resources.
import type { SurfaceModule } from '../../core/api/index.js';
import type { WebhooksSurfaceApi } from '../../core/surfaces/webhooks/webhooks-api.js';
import { createWebhookConsumer } from './consumer.js';
import { webhookEndpointOperations } from './operations.js';

export function webhooksSurface(api: WebhooksSurfaceApi): SurfaceModule {
  return {
    name: 'webhooks',
    operations: webhookEndpointOperations(api),
    outboxConsumers: [createWebhookConsumer(api)],
  };
}
