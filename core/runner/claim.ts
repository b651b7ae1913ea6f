// Claiming work: the oldest runnable response (queued, or in progress under an
// expired lease) is taken with FOR UPDATE SKIP LOCKED, so workers in any number
// of processes never take the same one; each claim bumps the fencing token.
import type { Queryable } from '../store/db.js';
import type { ResponseStatus } from '../responses/status.js';

export interface Claim {
  responseId: string;
  projectId: string;
  leaseToken: number;
  /** `in_progress` means this claim took over from a worker whose lease expired. */
  previousStatus: ResponseStatus;
}

export async function claimNext(db: Queryable, workerId: string, leaseSeconds: number): Promise<Claim | null> {
  const { rows } = await db.query<{ id: string; project_id: string; lease_token: number; previous_status: ResponseStatus }>(
    `WITH candidate AS (
       SELECT id, status FROM responses
       WHERE status = 'queued' OR (status = 'in_progress' AND lease_expires_at < now())
       ORDER BY created_at LIMIT 1
       FOR UPDATE SKIP LOCKED)
     UPDATE responses r SET status = 'in_progress', lease_owner = $1, lease_token = r.lease_token + 1,
       lease_expires_at = now() + make_interval(secs => $2)
     FROM candidate c WHERE r.id = c.id
     RETURNING r.id, r.project_id, r.lease_token, c.status AS previous_status`,
    [workerId, leaseSeconds],
  );
  const row = rows[0];
  return row ? { responseId: row.id, projectId: row.project_id, leaseToken: row.lease_token, previousStatus: row.previous_status } : null;
}

/** Extends the lease; false when the token is stale (someone else owns the response now). */
export async function renewLease(db: Queryable, claim: Claim, leaseSeconds: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE responses SET lease_expires_at = now() + make_interval(secs => $3)
     WHERE id = $1 AND lease_token = $2 AND status = 'in_progress'`,
    [claim.responseId, claim.leaseToken, leaseSeconds],
  );
  return rowCount > 0;
}

/** Lets another worker take the response at once (graceful shutdown). */
export async function releaseLease(db: Queryable, claim: Claim): Promise<void> {
  await db.query(`UPDATE responses SET lease_expires_at = now() WHERE id = $1 AND lease_token = $2 AND status = 'in_progress'`, [
    claim.responseId,
    claim.leaseToken,
  ]);
}
