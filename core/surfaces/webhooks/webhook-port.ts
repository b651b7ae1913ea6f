// The webhook port: what the webhook surface (adapters/webhooks) needs from the
// kernel beyond the outbox. The kernel keeps the endpoints (URL, events, agent
// filter, signing secrets by reference, health); the surface signs and sends.
//
// Glossary
//   endpoint     a project's receiver URL, the event types it wants, optionally
//                only some agents' responses; it becomes outbox subscriptions
//                (consumer `webhook`, target = the endpoint id)
//   event type   `response.<status>` as receivers see it; `response.incomplete`
//                stands for timed_out and budget_exceeded
//   attempt      one POST of a delivery; each is recorded for operators
import type { ResponseStatus, WebhookEventType } from '../../../generated/schemas.js';

/** The outbox consumer name of webhook deliveries. */
export const WEBHOOK_CONSUMER = 'webhook';

/** The event type `webhook.test` deliveries carry (POST …/test). */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

/** Every concrete event type and the response statuses it announces. `*` is all of them. */
export const WEBHOOK_EVENT_STATUSES = {
  'response.completed': ['completed'],
  'response.failed': ['failed'],
  'response.canceled': ['canceled'],
  'response.incomplete': ['timed_out', 'budget_exceeded'],
  'response.waiting_for_approval': ['waiting_for_approval'],
  'response.waiting_for_input': ['waiting_for_input'],
  'response.waiting_for_tool': ['waiting_for_tool'],
} as const satisfies Record<Exclude<WebhookEventType, '*'>, readonly ResponseStatus[]>;

export type WebhookResponseEventType = keyof typeof WEBHOOK_EVENT_STATUSES;

/** The event type announcing a status; null for statuses no webhook announces (queued, in_progress). */
export function webhookEventTypeOf(status: ResponseStatus): WebhookResponseEventType | null {
  for (const [type, statuses] of Object.entries(WEBHOOK_EVENT_STATUSES)) {
    if ((statuses as readonly ResponseStatus[]).includes(status)) return type as WebhookResponseEventType;
  }
  return null;
}

/** What the surface needs to make one attempt: where, and the secrets to sign with (newest first). */
export interface WebhookSigningTarget {
  endpointId: string;
  url: string;
  enabled: boolean;
  disabledReason: string | null;
  /** `whsec_…`; two during a rotation's overlap, both signing. Never logged, never stored elsewhere. */
  secrets: string[];
}

/** One attempt as the surface reports it. Errors are shown to operators: never a secret in them. */
export interface WebhookAttemptReport {
  projectId: string;
  endpointId: string;
  deliveryId: string;
  attempt: number;
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** When the next attempt is due, when this one failed and another follows. */
  nextAttemptAt: Date | null;
}

/** What recording an attempt decided about the endpoint. */
export interface WebhookAttemptOutcome {
  /** Set when the endpoint was disabled by this report (failing for longer than the configured period). */
  disabledReason: string | null;
}
