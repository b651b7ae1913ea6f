// Claiming work: the oldest runnable responses are taken with FOR UPDATE SKIP
// LOCKED, so workers in any number of processes never take the same one, and
// each claim bumps the fencing token. Runnable means: queued; in progress with
// no lease (handed back by an API action) or an expired one (its worker died);
// or waiting with a wake-up time that has passed (approval timeout, deadline).
//
// A worker claims as many as it has free slots in one transaction, which also
// journals each one's return to in_progress, and gets back everything its runs
// start from (the rows, their agents' specs): no read follows a claim.
import type { AgentSpecFields } from '../../generated/schemas.js';
import { WORK_CHANNEL } from '../journal/wakeups.js';
import { RESPONSE_COLUMNS, RESPONSE_JOIN, type ResponseRow } from '../responses/responses.js';
import { journalStatus } from '../responses/status-writer.js';
import type { Queryable } from '../store/db.js';
import { CLAIMABLE_STATUSES, type ResponseStatus } from '../response-status.js';

export interface Claim {
  responseId: string;
  projectId: string;
  leaseToken: number;
  previousStatus: ResponseStatus;
  /** The previous worker's lease expired mid-run: it may have left open output items. */
  takeover: boolean;
}

/** A claim with what its run starts from, as the claim left the row. */
export interface ClaimedRun {
  claim: Claim;
  row: RunRow;
  /** The spec of the agent revision the response pinned. */
  spec: AgentSpecFields;
}

/** A response as its run reads it: the row, and how many of its tool calls are not completed. */
export type RunRow = ResponseRow & { open_calls: number };

/** The column a run reads besides the row's: whether any tool call is left to run, answer or expire. */
export const OPEN_CALLS = `(SELECT count(*)::integer FROM tool_calls oc WHERE oc.response_id = r.id AND oc.status <> 'completed') AS open_calls`;

type ClaimedRow = RunRow & { agent_spec: AgentSpecFields; previous_status: ResponseStatus; takeover: boolean };

/** What a claim writes: in progress, under a new lease of the worker (admission on the fast path inserts the same). */
const claimSet = (workerId: string, leaseSeconds: string) =>
  `status = 'in_progress', lease_owner = ${workerId}, lease_token = r.lease_token + 1, lease_expires_at = now() + make_interval(secs => ${leaseSeconds}), wake_at = NULL`;

/** Claims up to `limit` runnable responses. */
async function claimRows(db: Queryable, workerId: string, leaseSeconds: number, limit: number): Promise<ClaimedRow[]> {
  const { rows } = await db.query<ClaimedRow>(
    // Two ordered index scans, not one OR'd bitmap scan: a plain index scan
    // marks the entries of finished responses dead as it passes them, so the
    // claim stays cheap however many completions await VACUUM (the bitmap scan
    // read every one of them again, each time). Each branch locks at most
    // $4 rows; the few it does not keep are unlocked at commit. (queued and
    // in_progress are always claimable; $3 names the waiting ones that are.)
    `WITH runnable AS (
       SELECT id, status, lease_expires_at, created_at FROM responses
       WHERE status IN ('queued', 'in_progress')
         AND (status = 'queued' OR lease_expires_at IS NULL OR lease_expires_at < now())
       ORDER BY created_at LIMIT $4
       FOR UPDATE SKIP LOCKED),
     woken AS (
       SELECT id, status, lease_expires_at, created_at FROM responses
       WHERE wake_at <= now() AND status LIKE 'waiting_for_%' AND status = ANY($3::text[])
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
    [workerId, leaseSeconds, CLAIMABLE_STATUSES, limit],
  );
  return rows.sort((a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime());
}

function toClaim(row: ClaimedRow): Claim {
  return { responseId: row.id, projectId: row.project_id, leaseToken: row.lease_token, previousStatus: row.previous_status, takeover: row.takeover };
}

/** Claims the oldest runnable response, in one statement. */
export async function claimNext(db: Queryable, workerId: string, leaseSeconds: number): Promise<Claim | null> {
  const [row] = await claimRows(db, workerId, leaseSeconds, 1);
  return row ? toClaim(row) : null;
}

/** The claims' own writes: a response that comes back to in_progress says so in its journal, under the new lease. */
async function announceClaims(tx: Queryable, rows: ClaimedRow[]): Promise<ClaimedRun[]> {
  const runs: ClaimedRun[] = [];
  for (const row of rows) {
    const claim = toClaim(row);
    if (!claim.takeover && claim.previousStatus !== 'in_progress') await journalStatus(tx, claim, row);
    const { agent_spec: spec, previous_status: _previous, takeover: _takeover, ...runRow } = row;
    runs.push({ claim, row: runRow, spec });
  }
  return runs;
}

/** Claims up to `limit` runnable responses in the caller's transaction, oldest first, journaling each one's return to in_progress. */
export async function claimWork(tx: Queryable, workerId: string, leaseSeconds: number, limit: number): Promise<ClaimedRun[]> {
  return announceClaims(tx, await claimRows(tx, workerId, leaseSeconds, limit));
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
