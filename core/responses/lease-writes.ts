// The writes of a response's lease: a worker's claim (in progress, a new
// fencing token, an expiry), its heartbeat, and its hand-back. Which responses
// a worker claims and what it does with them is the runner's (runner/claim.ts);
// the statements are here, with every other write of `responses`.
import type { AgentSpecFields } from '../../generated/schemas.js';
import { WORK_CHANNEL } from '../journal/wakeups.js';
import type { Queryable } from '../store/db.js';
import type { ResponseStatus } from '../response-status.js';
import { RESPONSE_COLUMNS, RESPONSE_JOIN, type ResponseRow } from './responses.js';

/** A response as its run reads it: the row, and how many of its tool calls are not completed. */
export type RunRow = ResponseRow & { open_calls: number };

/** The column a run reads besides the row's: whether any tool call is left to run, answer or expire. */
export const OPEN_CALLS = `(SELECT count(*)::integer FROM tool_calls oc WHERE oc.response_id = r.id AND oc.status <> 'completed') AS open_calls`;

/** A claimed response as the claim left it, with its agent revision's spec and what it was before. */
export type ClaimedRow = RunRow & { agent_spec: AgentSpecFields; previous_status: ResponseStatus; takeover: boolean };

/** What a claim writes: in progress, under a new lease of the worker (admission on the fast path inserts the same). */
const claimSet = (workerId: string, leaseSeconds: string) =>
  `status = 'in_progress', lease_owner = ${workerId}, lease_token = r.lease_token + 1, lease_expires_at = now() + make_interval(secs => ${leaseSeconds}), wake_at = NULL`;

/** Claims up to `limit` runnable responses (queued, in progress without a live lease, or woken in one of `claimable`: a wait or parked), oldest first. */
export async function claimRunnable(
  db: Queryable,
  workerId: string,
  leaseSeconds: number,
  claimable: readonly ResponseStatus[],
  limit: number,
): Promise<ClaimedRow[]> {
  const { rows } = await db.query<ClaimedRow>(
    // Two ordered index scans, not one OR'd bitmap scan: a plain index scan
    // marks the entries of finished responses dead as it passes them, so the
    // claim stays cheap however many completions await VACUUM (the bitmap scan
    // read every one of them again, each time). Each branch locks at most
    // $4 rows; the few it does not keep are unlocked at commit. (queued and
    // in_progress are always claimable; $3 names the suspended ones — waits
    // and parked — that are.)
    `WITH runnable AS (
       SELECT id, status, lease_expires_at, created_at FROM responses
       WHERE status IN ('queued', 'in_progress')
         AND (status = 'queued' OR lease_expires_at IS NULL OR lease_expires_at < now())
       ORDER BY created_at LIMIT $4
       FOR UPDATE SKIP LOCKED),
     woken AS (
       SELECT id, status, lease_expires_at, created_at FROM responses
       WHERE wake_at <= now() AND status NOT IN ('queued', 'in_progress') AND status = ANY($3::text[])
       ORDER BY wake_at LIMIT $4
       FOR UPDATE SKIP LOCKED),
     candidate AS (
       SELECT id, status, lease_expires_at, created_at FROM runnable
       UNION ALL SELECT id, status, lease_expires_at, created_at FROM woken
       ORDER BY created_at LIMIT $4)
     UPDATE responses r SET ${claimSet('$1', '$2')}
     FROM candidate c, agents a, agent_revisions rev WHERE r.id = c.id AND ${RESPONSE_JOIN}
     RETURNING ${RESPONSE_COLUMNS}, ${OPEN_CALLS}, rev.spec AS agent_spec, c.status AS previous_status,
       (c.status = 'in_progress' AND c.lease_expires_at IS NOT NULL) AS takeover`,
    [workerId, leaseSeconds, claimable, limit],
  );
  return rows.sort((a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime());
}

/** Extends the lease. `held` is false when the token is stale (someone else owns the response now). */
export async function extendLease(
  db: Queryable,
  responseId: string,
  leaseToken: number,
  leaseSeconds: number,
): Promise<{ held: boolean; cancelRequested: boolean }> {
  const { rows } = await db.query<{ cancel_requested: boolean }>(
    `UPDATE responses SET lease_expires_at = now() + make_interval(secs => $3)
     WHERE id = $1 AND lease_token = $2 AND status = 'in_progress'
     RETURNING cancel_requested_at IS NOT NULL AS cancel_requested`,
    [responseId, leaseToken, leaseSeconds],
  );
  return { held: rows.length > 0, cancelRequested: rows[0]?.cancel_requested === true };
}

/** Lets the lease expire in `afterSeconds`, and NOTIFYs idle workers in every process. Nothing when the token is stale. */
export async function handBackLease(db: Queryable, responseId: string, leaseToken: number, afterSeconds: number): Promise<void> {
  await db.query(
    `WITH released AS (
       UPDATE responses SET lease_expires_at = now() + make_interval(secs => $3)
       WHERE id = $1 AND lease_token = $2 AND status = 'in_progress' RETURNING id)
     SELECT pg_notify($4, id) FROM released`,
    [responseId, leaseToken, afterSeconds, WORK_CHANNEL],
  );
}
