// /v1/webhook_endpoints: the project's webhook endpoints, their deliveries and
// their signing secrets (shown once, in the answer that makes or rotates one).
import type { SurfaceOperations } from '../../core/api/surface.js';
import type { WebhooksApi } from '../../core/surfaces/webhooks/webhooks-api.js';

export function webhookEndpointOperations({ webhooks }: WebhooksApi): SurfaceOperations {
  return {
    createWebhookEndpoint: async ({ projectId, body, idempotency, replay }) => {
      // A repeat answers with the endpoint as it is now: the secret is shown once.
      if (replay) return { status: 201, body: await webhooks.get(projectId, replay.resourceId) };
      return { status: 201, body: await webhooks.create(projectId, body, { idempotency }) };
    },
    listWebhookEndpoints: async ({ projectId, query }) => ({ body: await webhooks.list(projectId, query) }),
    getWebhookEndpoint: async ({ projectId, params }) => ({ body: await webhooks.get(projectId, params.endpoint) }),
    updateWebhookEndpoint: async ({ projectId, params, body }) => ({ body: await webhooks.update(projectId, params.endpoint, body) }),
    deleteWebhookEndpoint: async ({ projectId, params }) => {
      const id = await webhooks.delete(projectId, params.endpoint);
      return { body: { id, object: 'webhook_endpoint.deleted', deleted: true } };
    },
    rotateWebhookSecret: async ({ projectId, params, body }) => ({ body: await webhooks.rotateSecret(projectId, params.endpoint, body ?? {}) }),
    listWebhookDeliveries: async ({ projectId, params, query }) => ({ body: await webhooks.deliveries(projectId, params.endpoint, query) }),
    getWebhookDelivery: async ({ projectId, params }) => ({ body: await webhooks.delivery(projectId, params.endpoint, params.delivery) }),
    resendWebhookDelivery: async ({ projectId, params, idempotency, replay }) => {
      // A repeat answers with the delivery as it is now; it is not put back twice.
      if (replay) return { status: 202, body: await webhooks.delivery(projectId, params.endpoint, replay.resourceId) };
      return { status: 202, body: await webhooks.resend(projectId, params.endpoint, params.delivery, { idempotency }) };
    },
    replayWebhookDeliveries: async ({ projectId, params, body }) => ({ status: 202, body: await webhooks.replay(projectId, params.endpoint, body) }),
    testWebhookEndpoint: async ({ projectId, params }) => ({ status: 202, body: await webhooks.test(projectId, params.endpoint) }),
  };
}
