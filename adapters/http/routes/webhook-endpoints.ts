import type { KernelApi } from '../../../core/api/index.js';
import type { OperationHandlers } from '../operations.js';

export function webhookEndpointHandlers({ webhooks }: KernelApi): OperationHandlers {
  return {
    createWebhookEndpoint: async (_req, res, { projectId, body, idempotency, replay }) => {
      // A repeat answers with the endpoint as it is now: the secret is shown once.
      if (replay) return void res.status(201).json(await webhooks.get(projectId, replay.resourceId));
      res.status(201).json(await webhooks.create(projectId, body, { idempotency }));
    },
    listWebhookEndpoints: async (_req, res, { projectId, query }) => {
      res.json(await webhooks.list(projectId, query));
    },
    getWebhookEndpoint: async (_req, res, { projectId, params }) => {
      res.json(await webhooks.get(projectId, params.endpoint));
    },
    updateWebhookEndpoint: async (_req, res, { projectId, params, body }) => {
      res.json(await webhooks.update(projectId, params.endpoint, body));
    },
    deleteWebhookEndpoint: async (_req, res, { projectId, params }) => {
      const id = await webhooks.delete(projectId, params.endpoint);
      res.json({ id, object: 'webhook_endpoint.deleted', deleted: true });
    },
    rotateWebhookSecret: async (_req, res, { projectId, params, body }) => {
      res.json(await webhooks.rotateSecret(projectId, params.endpoint, body ?? {}));
    },
    listWebhookDeliveries: async (_req, res, { projectId, params, query }) => {
      res.json(await webhooks.deliveries(projectId, params.endpoint, query));
    },
    getWebhookDelivery: async (_req, res, { projectId, params }) => {
      res.json(await webhooks.delivery(projectId, params.endpoint, params.delivery));
    },
    resendWebhookDelivery: async (_req, res, { projectId, params }) => {
      res.status(202).json(await webhooks.resend(projectId, params.endpoint, params.delivery));
    },
    replayWebhookDeliveries: async (_req, res, { projectId, params, body }) => {
      res.status(202).json(await webhooks.replay(projectId, params.endpoint, body));
    },
    testWebhookEndpoint: async (_req, res, { projectId, params }) => {
      res.status(202).json(await webhooks.test(projectId, params.endpoint));
    },
  };
}
