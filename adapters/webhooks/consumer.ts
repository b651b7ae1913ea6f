// The webhook surface's outbox consumer: one attempt of one delivery is one
// signed POST to the endpoint's URL, through the egress guard, which refuses
// private and metadata addresses on the address actually connected to and never
// follows a redirect. 2xx is delivered; 410 disables the endpoint; anything
// else, a timeout or a connection error is retried on the operator's schedule
// (a 429's or 503's Retry-After wins). Every attempt is recorded for operators.
import type { WebhooksSurfaceApi } from '../../core/surfaces/webhooks/webhooks-api.js';
import { egressRefusalIn } from '../../core/egress/egress-port.js';
import type { DeliveryResult, OutboxConsumer, OutboxDelivery } from '../../core/outbox/outbox-port.js';
import { WEBHOOK_CONSUMER } from '../../core/surfaces/webhooks/webhook-port.js';
import { UndeliverableError, webhookEvent } from './payload.js';
import { honoursRetryAfter, retryAfterMs, scheduledDelayMs } from './retry-policy.js';
import { signedHeaders } from './signing.js';

export interface WebhookConsumerOptions {
  /** Uniform in [0, 1), for the schedule's jitter. Default Math.random. */
  random?: () => number;
}

const USER_AGENT = 'Palai-Webhooks/1';

/** An attempt's result before it is recorded. */
interface Sent {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  /** The delivery can never succeed: no retry. */
  final: boolean;
  retryAfterMs?: number;
  /** The receiver said the endpoint is gone (410). */
  gone: boolean;
}

/** A connection error's most telling message: the innermost cause's code and text (fetch says only "fetch failed"). */
function describe(error: unknown): string {
  let current: unknown = error;
  let text = error instanceof Error ? error.message : String(error);
  for (let depth = 0; current instanceof Error && depth < 5; depth++, current = current.cause) {
    const code = (current as NodeJS.ErrnoException).code;
    text = code ? `${code}: ${current.message}` : current.message;
  }
  return text;
}

export function createWebhookConsumer(api: WebhooksSurfaceApi, options: WebhookConsumerOptions = {}): OutboxConsumer {
  const { webhookTimeoutSeconds, webhookRetryScheduleMs, webhookConcurrency } = api.config;
  const random = options.random ?? Math.random;

  async function send(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<Sent> {
    const timeout = AbortSignal.timeout(webhookTimeoutSeconds * 1000);
    try {
      const res = await api.egress(url, { method: 'POST', headers, body, signal: AbortSignal.any([signal, timeout]) });
      await res.body?.cancel().catch(() => undefined);
      const status = res.status;
      if (status >= 200 && status < 300) return { ok: true, statusCode: status, error: null, final: false, gone: false };
      const error = status >= 300 && status < 400 ? `answered ${status} (redirects are not followed)` : `answered ${status}`;
      return {
        ok: false,
        statusCode: status,
        error,
        final: status === 410,
        gone: status === 410,
        retryAfterMs: honoursRetryAfter(status) ? retryAfterMs(res.headers.get('retry-after')) : undefined,
      };
    } catch (error) {
      const refusal = egressRefusalIn(error);
      if (refusal) return { ok: false, statusCode: null, error: refusal.message, final: true, gone: false };
      if (timeout.aborted && !signal.aborted)
        return { ok: false, statusCode: null, error: `timed out after ${webhookTimeoutSeconds} s`, final: false, gone: false };
      if (signal.aborted) throw error;
      return { ok: false, statusCode: null, error: describe(error), final: false, gone: false };
    }
  }

  async function deliver(delivery: OutboxDelivery, signal: AbortSignal): Promise<DeliveryResult> {
    const target = await api.webhooks.signingTarget(delivery.projectId, delivery.target);
    if (!target) return { kind: 'dead', error: 'the webhook endpoint was deleted' };
    if (!target.enabled) return { kind: 'dead', error: `the webhook endpoint is disabled${target.disabledReason ? `: ${target.disabledReason}` : ''}` };
    let body: string;
    try {
      body = JSON.stringify(await webhookEvent(api, delivery));
    } catch (error) {
      if (error instanceof UndeliverableError) return { kind: 'dead', error: error.message };
      throw error;
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...signedHeaders(target.secrets, delivery.id, new Date(), body),
    };
    const started = performance.now();
    const sent = await send(target.url, headers, body, signal);
    const latencyMs = performance.now() - started;

    let result: DeliveryResult;
    let nextAttemptAt: Date | null = null;
    if (sent.ok) result = { kind: 'delivered' };
    else if (sent.final) result = { kind: 'dead', error: sent.error ?? 'failed' };
    else {
      const delay = sent.retryAfterMs ?? scheduledDelayMs(webhookRetryScheduleMs, delivery.attempts, random);
      if (delay === null) result = { kind: 'dead', error: `gave up after ${delivery.attempts} attempts: ${sent.error}` };
      else {
        result = { kind: 'retry', error: sent.error ?? 'failed', retryAfterMs: delay };
        nextAttemptAt = new Date(Date.now() + delay);
      }
    }
    const report = {
      projectId: delivery.projectId,
      endpointId: target.endpointId,
      deliveryId: delivery.id,
      attempt: delivery.attempts,
      ok: sent.ok,
      statusCode: sent.statusCode,
      latencyMs,
      error: sent.error,
      nextAttemptAt,
    };
    const outcome = await api.webhooks.recordAttempt(report);
    if (sent.gone) {
      const reason = 'the receiver answered 410 Gone';
      await api.webhooks.disable(delivery.projectId, target.endpointId, reason);
      return { kind: 'dead', error: `${reason}; the endpoint is disabled` };
    }
    if (outcome.disabledReason && result.kind === 'retry') return { kind: 'dead', error: `the endpoint was disabled: ${outcome.disabledReason}` };
    return result;
  }

  return { name: WEBHOOK_CONSUMER, perTargetConcurrency: webhookConcurrency, deliver };
}
