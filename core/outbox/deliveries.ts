// Deliveries as rows: writing a direct one in the caller's transaction, and
// what operators do with them (list, count, redeliver, purge).
import { reserveKey, type IdempotencyClaim } from '../idempotency/idempotency.js';
import { newId } from '../ids.js';
import type { Db, Queryable } from '../store/db.js';
import { OUTBOX_CHANNEL, type DeliveryInput, type DeliveryRecord, type DeliveryStatus, type OutboxDelivery } from './outbox-port.js';

export interface DeliveryRow {
  id: string;
  project_id: string;
  consumer: string;
  target: string;
  subscription_id: string | null;
  response_id: string | null;
  event_sequence: number | null;
  payload: Record<string, unknown>;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  lease_owner: string | null;
  lease_token: number;
  lease_expires_at: Date | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
  dead_at: Date | null;
}

export const deliveryFromRow = (row: DeliveryRow): OutboxDelivery => ({
  id: row.id,
  projectId: row.project_id,
  consumer: row.consumer,
  target: row.target,
  subscriptionId: row.subscription_id,
  responseId: row.response_id,
  eventSequence: row.event_sequence,
  payload: row.payload,
  attempts: row.attempts,
  createdAt: row.created_at,
});

const recordFromRow = (row: DeliveryRow): DeliveryRecord => ({
  ...deliveryFromRow(row),
  status: row.status,
  nextAttemptAt: row.next_attempt_at,
  leaseOwner: row.lease_owner,
  leaseExpiresAt: row.lease_expires_at,
  lastError: row.last_error,
  deliveredAt: row.delivered_at,
  deadAt: row.dead_at,
});

/** Writes one pending delivery, due now; the NOTIFY reaches idle dispatchers at commit. */
export async function enqueueDelivery(q: Queryable, input: DeliveryInput): Promise<string> {
  const id = newId('dlv');
  await q.query(
    `WITH inserted AS (
       INSERT INTO outbox_deliveries (id, project_id, consumer, target, response_id, event_sequence, payload)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING consumer)
     SELECT pg_notify($8, consumer) FROM inserted`,
    [id, input.projectId, input.consumer, input.target, input.responseId ?? null, input.eventSequence ?? null, JSON.stringify(input.payload), OUTBOX_CHANNEL],
  );
  return id;
}

export interface DeliveryFilter {
  projectId?: string;
  status?: DeliveryStatus;
  consumer?: string;
  /** Only deliveries to this target. */
  target?: string;
  /** Only deliveries older than this one (the next page, newest first). */
  before?: string;
  /** At most this many, newest first. */
  limit: number;
}

export async function listDeliveries(q: Queryable, filter: DeliveryFilter): Promise<DeliveryRecord[]> {
  const { rows } = await q.query<DeliveryRow>(
    `SELECT * FROM outbox_deliveries
     WHERE ($1::text IS NULL OR project_id = $1) AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR consumer = $3)
       AND ($5::text IS NULL OR target = $5) AND ($6::text IS NULL OR id < $6)
     ORDER BY id DESC LIMIT $4`,
    [filter.projectId ?? null, filter.status ?? null, filter.consumer ?? null, filter.limit, filter.target ?? null, filter.before ?? null],
  );
  return rows.map(recordFromRow);
}

/** One delivery, optionally only within a project; null when there is none. */
export async function getDelivery(q: Queryable, id: string, projectId?: string): Promise<DeliveryRecord | null> {
  const { rows } = await q.query<DeliveryRow>('SELECT * FROM outbox_deliveries WHERE id = $1 AND ($2::text IS NULL OR project_id = $2)', [
    id,
    projectId ?? null,
  ]);
  return rows[0] ? recordFromRow(rows[0]) : null;
}

/** `pending`: the delivery is still being tried, so nothing changed. */
export type RedeliverOutcome = 'requeued' | 'pending' | 'not_found';

/** The requeue itself: one statement, and its NOTIFY to the dispatchers. */
async function requeue(q: Queryable, id: string, projectId?: string): Promise<RedeliverOutcome> {
  const { rows } = await q.query<{ id: string }>(
    `WITH requeued AS (
       UPDATE outbox_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(),
         lease_owner = NULL, lease_expires_at = NULL, delivered_at = NULL, dead_at = NULL
       WHERE id = $1 AND ($2::text IS NULL OR project_id = $2) AND status IN ('delivered', 'dead')
       RETURNING id, consumer)
     SELECT id, pg_notify($3, consumer) FROM requeued`,
    [id, projectId ?? null, OUTBOX_CHANNEL],
  );
  if (rows.length > 0) return 'requeued';
  return (await getDelivery(q, id, projectId)) ? 'pending' : 'not_found';
}

/**
 * Puts a dead or delivered delivery back: pending, due now, attempts from zero,
 * same id (a receiver that deduplicates sees it as the one it already has).
 * With a caller's idempotency claim the key is taken in the same transaction,
 * so a repeat of the request answers for this redelivery instead of finding it pending.
 */
export async function redeliver(db: Db, id: string, projectId?: string, claim?: IdempotencyClaim): Promise<RedeliverOutcome> {
  if (!claim || !projectId) return requeue(db, id, projectId);
  return db.transaction(async (tx) => {
    const outcome = await requeue(tx, id, projectId);
    if (outcome === 'requeued') await reserveKey(tx, projectId, claim, id);
    return outcome;
  });
}

/** Which deliveries `redeliverMatching` puts back: one target's, written in a time window, in these statuses. */
export interface RedeliverSelection {
  projectId: string;
  consumer: string;
  target: string;
  from: Date;
  /** Default: now. */
  to?: Date | null;
  /** Of 'delivered' and 'dead'. */
  statuses: Array<Exclude<DeliveryStatus, 'pending'>>;
}

/** Puts back every matching delivery (as `redeliver` does, same ids); returns how many. */
export async function redeliverMatching(q: Queryable, selection: RedeliverSelection): Promise<number> {
  if (selection.statuses.length === 0) return 0;
  const { rows } = await q.query<{ id: string }>(
    `WITH requeued AS (
       UPDATE outbox_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(),
         lease_owner = NULL, lease_expires_at = NULL, delivered_at = NULL, dead_at = NULL
       WHERE project_id = $1 AND consumer = $2 AND target = $3 AND created_at >= $4 AND created_at <= coalesce($5::timestamptz, now())
         AND status = ANY ($6::text[])
       RETURNING id, consumer)
     SELECT id, pg_notify($7, consumer) FROM requeued`,
    [selection.projectId, selection.consumer, selection.target, selection.from, selection.to ?? null, selection.statuses, OUTBOX_CHANNEL],
  );
  return rows.length;
}

/** How many deliveries are in each status (every status present, zeros included). */
export async function countDeliveries(q: Queryable): Promise<Record<DeliveryStatus, number>> {
  const { rows } = await q.query<{ status: DeliveryStatus; count: number }>('SELECT status, count(*)::integer AS count FROM outbox_deliveries GROUP BY status');
  const counts: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, dead: 0 };
  for (const row of rows) counts[row.status] = row.count;
  return counts;
}

/** Deletes deliveries delivered more than `olderThanSeconds` ago (dead ones stay for operators); returns how many. */
export async function purgeDelivered(q: Queryable, olderThanSeconds: number): Promise<number> {
  const { rowCount } = await q.query(`DELETE FROM outbox_deliveries WHERE status = 'delivered' AND delivered_at < now() - make_interval(secs => $1)`, [
    olderThanSeconds,
  ]);
  return rowCount;
}
