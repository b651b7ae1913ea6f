// Claiming work: the oldest runnable response is taken with FOR UPDATE SKIP
// LOCKED, so workers in any number of processes never take the same one, and
// each claim bumps the fencing token. Runnable means: queued; in progress with
// no lease (handed back by an API action) or an expired one (its worker died);
// or waiting with a wake-up time that has passed (approval timeout, deadline).
import { WORK_CHANNEL } from '../journal/wakeups.js';
import type { Queryable } from '../store/db.js';
import { CLAIMABLE_STATUSES, type ResponseStatus } from '../responses/status.js';

export interface Claim {
  responseId: string;
  projectId: string;
  leaseToken: number;
  previousStatus: ResponseStatus;
  /** The previous worker's lease expired mid-run: it may have left open output items. */
  takeover: boolean;
}

export async function claimNext(db: Queryable, workerId: string, leaseSeconds: number): Promise<Claim | null> {
  const { rows } = await db.query<{ id: string; project_id: string; lease_token: number; previous_status: ResponseStatus; takeover: boolean }>(
    `WITH candidate AS (
       SELECT id, status, lease_expires_at FROM responses
       WHERE status = ANY($3::text[]) AND (status = 'queued'
          OR (status = 'in_progress' AND (lease_expires_at IS NULL OR lease_expires_at < now()))
          OR (status LIKE 'waiting_for_%' AND wake_at <= now()))
       ORDER BY created_at LIMIT 1
       FOR UPDATE SKIP LOCKED)
     UPDATE responses r SET status = 'in_progress', lease_owner = $1, lease_token = r.lease_token + 1,
       lease_expires_at = now() + make_interval(secs => $2), wake_at = NULL
     FROM candidate c WHERE r.id = c.id
     RETURNING r.id, r.project_id, r.lease_token, c.status AS previous_status,
       (c.status = 'in_progress' AND c.lease_expires_at IS NOT NULL) AS takeover`,
    [workerId, leaseSeconds, CLAIMABLE_STATUSES],
  );
  const row = rows[0];
  return row
    ? { responseId: row.id, projectId: row.project_id, leaseToken: row.lease_token, previousStatus: row.previous_status, takeover: row.takeover }
    : null;
}

/** Extends the lease. `held` is false when the token is stale (someone else owns the response now). */
export async function renewLease(db: Queryable, claim: Claim, leaseSeconds: number): Promise<{ held: boolean; cancelRequested: boolean }> {
  const { rows } = await db.query<{ cancel_requested: boolean }>(
    `UPDATE responses SET lease_expires_at = now() + make_interval(secs => $3)
     WHERE id = $1 AND lease_token = $2 AND status = 'in_progress'
     RETURNING cancel_requested_at IS NOT NULL AS cancel_requested`,
    [claim.responseId, claim.leaseToken, leaseSeconds],
  );
  return { held: rows.length > 0, cancelRequested: rows[0]?.cancel_requested === true };
}

/**
 * Hands the response back: any worker may take it over once `afterSeconds` have
 * passed (0: at once, as on a graceful shutdown). The NOTIFY wakes idle workers
 * in every process instead of leaving them to their next poll.
 */
export async function releaseLease(db: Queryable, claim: Claim, afterSeconds = 0): Promise<void> {
  await db.query(
    `WITH released AS (
       UPDATE responses SET lease_expires_at = now() + make_interval(secs => $3)
       WHERE id = $1 AND lease_token = $2 AND status = 'in_progress' RETURNING id)
     SELECT pg_notify($4, id) FROM released`,
    [claim.responseId, claim.leaseToken, afterSeconds, WORK_CHANNEL],
  );
}
