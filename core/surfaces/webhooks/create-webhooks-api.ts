// Binds the webhook wing's slice to one kernel.
import { atBoundary } from '../../api/boundary.js';
import type { Kernel } from '../../kernel.js';
import { getEndpointDelivery, listEndpointDeliveries, recordAttempt, replayDeliveries, resendDelivery, testEndpoint } from './deliveries.js';
import {
  createEndpoint,
  deleteEndpoint,
  disableEndpoint,
  endpointView,
  listEndpoints,
  requireEndpoint,
  rotateSecret,
  signingTarget,
  updateEndpoint,
} from './endpoints.js';
import type { WebhooksApi } from './webhooks-api.js';

export function createWebhooksApi({ db, secrets, config }: Kernel): WebhooksApi {
  return atBoundary({
    webhooks: {
      create: (projectId, request, options) => createEndpoint(db, secrets, projectId, request, options?.idempotency),
      get: async (projectId, id) => endpointView(await requireEndpoint(db, projectId, id)),
      list: (projectId, page) => listEndpoints(db, projectId, page),
      update: (projectId, id, request) => updateEndpoint(db, projectId, id, request),
      delete: (projectId, id) => deleteEndpoint(db, secrets, projectId, id),
      rotateSecret: (projectId, id, request) => rotateSecret(db, secrets, projectId, id, request),
      deliveries: (projectId, id, page) => listEndpointDeliveries(db, projectId, id, page),
      delivery: (projectId, id, deliveryId) => getEndpointDelivery(db, projectId, id, deliveryId),
      resend: (projectId, id, deliveryId, options) => resendDelivery(db, projectId, id, deliveryId, options?.idempotency),
      replay: (projectId, id, request) => replayDeliveries(db, projectId, id, request),
      test: (projectId, id) => testEndpoint(db, projectId, id),
      signingTarget: (projectId, id) => signingTarget(db, secrets, projectId, id),
      recordAttempt: (report) => recordAttempt(db, report, config.webhookDisableAfterSeconds),
      disable: (projectId, id, reason) => disableEndpoint(db, projectId, id, reason),
    },
  });
}
