// Leased claiming of deliveries, like the workers' claim of responses: FOR
// UPDATE SKIP LOCKED so dispatchers in any number of processes never take the
// same delivery at once, and a fencing token bumped on every claim. Every
// ending of an attempt is guarded by that token: a holder whose lease expired
// and whose delivery was claimed again changes nothing, and learns it (false).
import type { Queryable } from '../store/db.js';
import { deliveryFromRow, type DeliveryRow } from './deliveries.js';
import { OUTBOX_CHANNEL, storedError, type OutboxDelivery } from './outbox-port.js';

export interface ClaimedDelivery extends OutboxDelivery {
  leaseToken: number;
}

/** Which claim an ending applies to. */
export type DeliveryLease = Pick<ClaimedDelivery, 'id' | 'leaseToken'>;

export interface ClaimOptions {
  owner: string;
  /** Only deliveries of these consumers; none: nothing is claimed. */
  consumers: string[];
  /**
   * Per consumer, how many attempts one target may have in flight (leased and
   * unexpired, in any process); a consumer absent here has no such limit.
   */
  perTargetLimits?: ReadonlyMap<string, number>;
  limit: number;
  leaseSeconds: number;
}

/**
 * Claims up to `limit` due deliveries: pending, next attempt due, lease absent
 * or expired (its holder died). Counts the attempt now, so a delivery whose
 * attempts keep killing their process still runs out of attempts.
 */
export async function claimDeliveries(q: Queryable, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  if (options.consumers.length === 0 || options.limit <= 0) return [];
  if (options.perTargetLimits && options.consumers.some((c) => options.perTargetLimits!.has(c))) return claimWithTargetLimits(q, options);
  const { rows } = await q.query<DeliveryRow>(
    `WITH due AS (
       SELECT id FROM outbox_deliveries
       WHERE status = 'pending' AND next_attempt_at <= now() AND consumer = ANY ($2::text[])
         AND (lease_expires_at IS NULL OR lease_expires_at < now())
       ORDER BY next_attempt_at, id LIMIT $3
       FOR UPDATE SKIP LOCKED)
     UPDATE outbox_deliveries d SET lease_owner = $1, lease_token = d.lease_token + 1, attempts = d.attempts + 1,
       lease_expires_at = now() + make_interval(secs => $4)
     FROM due WHERE d.id = due.id
     RETURNING d.*`,
    [options.owner, options.consumers, options.limit, options.leaseSeconds],
  );
  return rows.map((row) => ({ ...deliveryFromRow(row), leaseToken: row.lease_token }));
}

/**
 * The claim with a per-target limit: due deliveries are ranked within their
 * target after the target's attempts already in flight, and only those within
 * the limit are taken. Two dispatchers claiming at the same moment can each
 * see the other's claims as not yet made, so the limit may be passed briefly by
 * one batch; it holds exactly within one process.
 */
async function claimWithTargetLimits(q: Queryable, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  const limits = options.consumers.map((c) => options.perTargetLimits!.get(c) ?? 2 ** 31 - 1);
  const { rows } = await q.query<DeliveryRow>(
    `WITH limits AS (
       SELECT * FROM unnest($2::text[], $5::integer[]) AS l(consumer, per_target)),
     busy AS (
       SELECT consumer, target, count(*)::integer AS n FROM outbox_deliveries
       WHERE status = 'pending' AND consumer = ANY ($2::text[]) AND lease_expires_at >= now()
       GROUP BY consumer, target),
     ranked AS (
       SELECT d.id, d.next_attempt_at, l.per_target, coalesce(b.n, 0)
                + row_number() OVER (PARTITION BY d.consumer, d.target ORDER BY d.next_attempt_at, d.id) AS slot
       FROM outbox_deliveries d
       JOIN limits l ON l.consumer = d.consumer
       LEFT JOIN busy b ON b.consumer = d.consumer AND b.target = d.target
       WHERE d.status = 'pending' AND d.next_attempt_at <= now()
         AND (d.lease_expires_at IS NULL OR d.lease_expires_at < now())),
     due AS (
       SELECT id FROM outbox_deliveries
       WHERE id IN (SELECT id FROM ranked WHERE slot <= per_target ORDER BY next_attempt_at, id LIMIT $3)
         AND status = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at < now())
       ORDER BY next_attempt_at, id
       FOR UPDATE SKIP LOCKED)
     UPDATE outbox_deliveries d SET lease_owner = $1, lease_token = d.lease_token + 1, attempts = d.attempts + 1,
       lease_expires_at = now() + make_interval(secs => $4)
     FROM due WHERE d.id = due.id
     RETURNING d.*`,
    [options.owner, options.consumers, options.limit, options.leaseSeconds, limits],
  );
  return rows.map((row) => ({ ...deliveryFromRow(row), leaseToken: row.lease_token }));
}

/**
 * Extends the leases of attempts still running, each only while its claim
 * stands (same token, still pending); answers with the ids it extended. A claim
 * missing from the answer passed to another dispatcher or was ended elsewhere.
 */
export async function renewDeliveries(q: Queryable, leases: readonly DeliveryLease[], leaseSeconds: number): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  const { rows } = await q.query<{ id: string }>(
    `UPDATE outbox_deliveries d SET lease_expires_at = now() + make_interval(secs => $3)
     FROM unnest($1::text[], $2::integer[]) AS l(id, token)
     WHERE d.id = l.id AND d.lease_token = l.token AND d.status = 'pending'
     RETURNING d.id`,
    [leases.map((l) => l.id), leases.map((l) => l.leaseToken), leaseSeconds],
  );
  return new Set(rows.map((row) => row.id));
}

const ENDING_GUARD = "WHERE id = $1 AND lease_token = $2 AND status = 'pending'";

/** The attempt succeeded. */
export async function completeDelivery(q: Queryable, lease: DeliveryLease): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE outbox_deliveries SET status = 'delivered', delivered_at = now(), lease_owner = NULL, lease_expires_at = NULL
     ${ENDING_GUARD}`,
    [lease.id, lease.leaseToken],
  );
  return rowCount > 0;
}

/** The attempt failed: try again after `delayMs`. */
export async function retryDelivery(q: Queryable, lease: DeliveryLease, error: string, delayMs: number): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE outbox_deliveries SET next_attempt_at = now() + make_interval(secs => $4), last_error = $3,
       lease_owner = NULL, lease_expires_at = NULL
     ${ENDING_GUARD}`,
    [lease.id, lease.leaseToken, storedError(error), Math.max(0, delayMs) / 1000],
  );
  return rowCount > 0;
}

/** The delivery will never succeed, or ran out of attempts. */
export async function killDelivery(q: Queryable, lease: DeliveryLease, error: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE outbox_deliveries SET status = 'dead', dead_at = now(), last_error = $3, lease_owner = NULL, lease_expires_at = NULL
     ${ENDING_GUARD}`,
    [lease.id, lease.leaseToken, storedError(error)],
  );
  return rowCount > 0;
}

/**
 * Hands a claimed delivery back untried (a shutdown cut the attempt short):
 * due now, the attempt not counted. The NOTIFY lets another dispatcher take it at once.
 */
export async function releaseDelivery(q: Queryable, lease: DeliveryLease): Promise<boolean> {
  const { rows } = await q.query<{ id: string }>(
    `WITH released AS (
       UPDATE outbox_deliveries SET attempts = greatest(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL
       ${ENDING_GUARD}
       RETURNING id, consumer)
     SELECT id, pg_notify($3, consumer) FROM released`,
    [lease.id, lease.leaseToken, OUTBOX_CHANNEL],
  );
  return rows.length > 0;
}
