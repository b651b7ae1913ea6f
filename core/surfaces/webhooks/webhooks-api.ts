// The webhook wing's slice of the kernel API: the kernel keeps endpoints as
// outbox subscriptions of the `webhook` consumer (see webhook-port.ts); the
// webhook surface (adapters/webhooks) signs and sends. It receives this beside
// the KernelApi.
import type {
  CreateWebhookEndpointRequest,
  ReplayWebhookDeliveriesRequest,
  RotateWebhookSecretRequest,
  UpdateWebhookEndpointRequest,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookReplay,
} from '../../../generated/schemas.js';
import type { CommandOptions, KernelApi, Page, PageRequest } from '../../api/kernel-api.js';
import type { DeliveryPageRequest } from './deliveries.js';
import type { WebhookAttemptOutcome, WebhookAttemptReport, WebhookSigningTarget } from './webhook-port.js';

export interface WebhooksApi {
  webhooks: {
    /** The answer carries the signing secret, the only time it is shown. Needs PALAI_SECRET_KEY. */
    create(projectId: string, request: CreateWebhookEndpointRequest, options?: CommandOptions): Promise<WebhookEndpoint>;
    get(projectId: string, endpointId: string): Promise<WebhookEndpoint>;
    list(projectId: string, page: PageRequest): Promise<Page<WebhookEndpoint>>;
    update(projectId: string, endpointId: string, request: UpdateWebhookEndpointRequest): Promise<WebhookEndpoint>;
    delete(projectId: string, endpointId: string): Promise<string>;
    /** A new secret (in the answer); the old one keeps signing until the overlap ends. */
    rotateSecret(projectId: string, endpointId: string, request?: Partial<RotateWebhookSecretRequest>): Promise<WebhookEndpoint>;
    /** The endpoint's deliveries, newest first, each with its attempts. */
    deliveries(projectId: string, endpointId: string, page: DeliveryPageRequest): Promise<Page<WebhookDelivery>>;
    delivery(projectId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery>;
    /** With the caller's idempotency claim, a repeat of the request answers for this resend (the handler replays it). */
    resend(projectId: string, endpointId: string, deliveryId: string, options?: CommandOptions): Promise<WebhookDelivery>;
    replay(projectId: string, endpointId: string, request: ReplayWebhookDeliveriesRequest): Promise<WebhookReplay>;
    test(projectId: string, endpointId: string): Promise<WebhookDelivery>;
    /** For the surface's attempt: the URL and the secrets to sign with; null when the endpoint is gone. */
    signingTarget(projectId: string, endpointId: string): Promise<WebhookSigningTarget | null>;
    /** Records an attempt; may disable an endpoint failing for too long. */
    recordAttempt(report: WebhookAttemptReport): Promise<WebhookAttemptOutcome>;
    /** Disables the endpoint (a 410 from its receiver), the reason shown on it. */
    disable(projectId: string, endpointId: string, reason: string): Promise<boolean>;
  };
}

/** What the webhook surface is given. */
export type WebhooksSurfaceApi = KernelApi & WebhooksApi;
