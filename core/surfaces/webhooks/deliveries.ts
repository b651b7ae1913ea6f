// Webhook deliveries as operators see them: the outbox's deliveries to one
// endpoint, each with every attempt the webhook surface recorded (status code,
// latency, error, next attempt), and what operators do with them: resend one,
// replay a time window, send a test event. Recording an attempt also keeps the
// endpoint's health: one failing for longer than the configured period is disabled.
import type { ReplayWebhookDeliveriesRequest, WebhookAttempt, WebhookDelivery, WebhookDeliveryStatus, WebhookReplay } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import type { IdempotencyClaim } from '../../idempotency/inbox-port.js';
import { unixSeconds } from '../../json.js';
import { enqueueDelivery, getDelivery, listDeliveries, redeliver, redeliverMatching } from '../../outbox/deliveries.js';
import type { DeliveryRecord } from '../../outbox/outbox-port.js';
import { DEFAULT_PAGE_SIZE, type Page } from '../../pagination.js';
import type { Db, Queryable } from '../../store/db.js';
import { disableEndpoint, requireEndpoint } from './endpoints.js';
import { WEBHOOK_CONSUMER, WEBHOOK_TEST_EVENT, webhookEventTypeOf, type WebhookAttemptOutcome, type WebhookAttemptReport } from './webhook-port.js';

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

const attemptView = (row: AttemptRow): WebhookAttempt => ({
  attempt: row.attempt,
  status_code: row.status_code,
  latency_ms: row.latency_ms,
  error: row.error,
  next_attempt_at: unixSeconds(row.next_attempt_at),
  created_at: unixSeconds(row.created_at)!,
});

/** The event type a delivery carries: its announced status's, or a direct delivery's own `type`. */
function eventTypeOf(record: DeliveryRecord): string {
  const payload = record.payload as { status?: string; type?: string };
  if (record.subscriptionId !== null && typeof payload.status === 'string') {
    return webhookEventTypeOf(payload.status as Parameters<typeof webhookEventTypeOf>[0]) ?? `response.${payload.status}`;
  }
  return typeof payload.type === 'string' ? payload.type : 'unknown';
}

const deliveryView = (record: DeliveryRecord, attempts: AttemptRow[]): WebhookDelivery => ({
  id: record.id,
  object: 'webhook_delivery',
  endpoint_id: record.target,
  event_type: eventTypeOf(record),
  response_id: record.responseId,
  status: record.status,
  attempts: attempts.map(attemptView),
  next_attempt_at: record.status === 'pending' ? unixSeconds(record.nextAttemptAt) : null,
  last_error: record.lastError,
  created_at: unixSeconds(record.createdAt)!,
  delivered_at: unixSeconds(record.deliveredAt),
  dead_at: unixSeconds(record.deadAt),
});

async function attemptsOf(q: Queryable, deliveryIds: string[]): Promise<Map<string, AttemptRow[]>> {
  const byDelivery = new Map<string, AttemptRow[]>(deliveryIds.map((id) => [id, []]));
  if (deliveryIds.length === 0) return byDelivery;
  const { rows } = await q.query<AttemptRow>('SELECT * FROM webhook_attempts WHERE delivery_id = ANY ($1::text[]) ORDER BY id', [deliveryIds]);
  for (const row of rows) byDelivery.get(row.delivery_id)?.push(row);
  return byDelivery;
}

export interface DeliveryPageRequest {
  limit?: number;
  /** A delivery id: the page starts after it, newest first. */
  after?: string;
  status?: WebhookDeliveryStatus;
}

export async function listEndpointDeliveries(db: Db, projectId: string, endpointId: string, page: DeliveryPageRequest): Promise<Page<WebhookDelivery>> {
  await requireEndpoint(db, projectId, endpointId);
  const size = page.limit ?? DEFAULT_PAGE_SIZE;
  const records = await listDeliveries(db, {
    projectId,
    consumer: WEBHOOK_CONSUMER,
    target: endpointId,
    status: page.status,
    before: page.after,
    limit: size + 1,
  });
  const shown = records.slice(0, size);
  const attempts = await attemptsOf(
    db,
    shown.map((r) => r.id),
  );
  return {
    object: 'list',
    data: shown.map((r) => deliveryView(r, attempts.get(r.id) ?? [])),
    first_id: shown[0]?.id ?? null,
    last_id: shown.at(-1)?.id ?? null,
    has_more: records.length > size,
  };
}

async function requireEndpointDelivery(db: Queryable, projectId: string, endpointId: string, deliveryId: string): Promise<DeliveryRecord> {
  const record = await getDelivery(db, deliveryId, projectId);
  if (!record || record.consumer !== WEBHOOK_CONSUMER || record.target !== endpointId) {
    throw new PalaiError('not-found', `No delivery ${JSON.stringify(deliveryId)} to webhook endpoint ${JSON.stringify(endpointId)}.`);
  }
  return record;
}

export async function getEndpointDelivery(db: Db, projectId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
  const record = await requireEndpointDelivery(db, projectId, endpointId, deliveryId);
  return deliveryView(record, (await attemptsOf(db, [record.id])).get(record.id) ?? []);
}

/** Sends a delivered or dead delivery again, same id; a pending one is already being tried (invalid-state). */
export async function resendDelivery(db: Db, projectId: string, endpointId: string, deliveryId: string, claim?: IdempotencyClaim): Promise<WebhookDelivery> {
  await requireEndpointDelivery(db, projectId, endpointId, deliveryId);
  const outcome = await redeliver(db, deliveryId, projectId, claim);
  if (outcome === 'pending') {
    throw new PalaiError('invalid-state', `Delivery ${deliveryId} is still pending: it is being tried, and is not resent.`);
  }
  return getEndpointDelivery(db, projectId, endpointId, deliveryId);
}

/** Puts back the endpoint's dead deliveries (and delivered ones, if asked) written between from and to. */
export async function replayDeliveries(db: Db, projectId: string, endpointId: string, request: ReplayWebhookDeliveriesRequest): Promise<WebhookReplay> {
  await requireEndpoint(db, projectId, endpointId);
  if (request.to !== undefined && request.to < request.from) {
    throw new PalaiError('invalid-request', '`to` is before `from`.', { errors: [{ pointer: '/to', detail: 'must not be before from' }] });
  }
  const requeued = await redeliverMatching(db, {
    projectId,
    consumer: WEBHOOK_CONSUMER,
    target: endpointId,
    from: new Date(request.from * 1000),
    // Inclusive of the whole second named.
    to: request.to === undefined ? null : new Date(request.to * 1000 + 999),
    statuses: request.include_delivered ? ['dead', 'delivered'] : ['dead'],
  });
  return { object: 'webhook_endpoint.replay', requeued };
}

/** A durable `webhook.test` delivery to the endpoint, sent like any other. */
export async function testEndpoint(db: Db, projectId: string, endpointId: string): Promise<WebhookDelivery> {
  await requireEndpoint(db, projectId, endpointId);
  const id = await enqueueDelivery(db, {
    projectId,
    consumer: WEBHOOK_CONSUMER,
    target: endpointId,
    payload: { type: WEBHOOK_TEST_EVENT, timestamp: new Date().toISOString(), data: { endpoint_id: endpointId } },
  });
  return getEndpointDelivery(db, projectId, endpointId, id);
}

/**
 * Records one attempt. A success clears the endpoint's failing streak; a failure
 * starts one, or, when the streak is older than `disableAfterSeconds`, disables the endpoint.
 */
export async function recordAttempt(db: Db, report: WebhookAttemptReport, disableAfterSeconds: number): Promise<WebhookAttemptOutcome> {
  // One statement, so an attempt costs one commit: the attempt row, and the endpoint's failing streak
  // cleared by a success or started (kept) by a failure.
  const { rows } = await db.query<{ failing_since: Date | null; overdue: boolean | null }>(
    `WITH attempt AS (
       INSERT INTO webhook_attempts (id, project_id, endpoint_id, delivery_id, attempt, status_code, latency_ms, error, next_attempt_at)
       VALUES (palai_new_id('whatt'), $1, $2, $3, $4, $5, $6, $7, $8))
     UPDATE webhook_endpoints SET failing_since = CASE WHEN $9 THEN NULL ELSE coalesce(failing_since, now()) END
     WHERE project_id = $1 AND id = $2 AND (NOT $9 OR failing_since IS NOT NULL)
     RETURNING failing_since, failing_since < now() - make_interval(secs => $10) AS overdue`,
    [
      report.projectId,
      report.endpointId,
      report.deliveryId,
      report.attempt,
      report.statusCode,
      Math.max(0, Math.round(report.latencyMs)),
      report.error?.slice(0, 500) ?? null,
      report.nextAttemptAt,
      report.ok,
      disableAfterSeconds,
    ],
  );
  const streak = rows[0];
  if (report.ok || !streak?.overdue || !streak.failing_since) return { disabledReason: null };
  const reason = `Deliveries have failed since ${streak.failing_since.toISOString()}, longer than ${disableAfterSeconds} s; the latest: ${report.error ?? 'no error given'}`;
  return { disabledReason: (await disableEndpoint(db, report.projectId, report.endpointId, reason)) ? reason : null };
}
