// Claiming work: the oldest runnable responses are taken with FOR UPDATE SKIP
// LOCKED, so workers in any number of processes never take the same one, and
// each claim bumps the fencing token. Runnable means: queued; in progress with
// no lease (handed back by an API action) or an expired one (its worker died);
// or waiting or parked with a wake-up time that has passed (approval timeout,
// a parked call's deadline, the response's own).
//
// A worker claims as many as it has free slots in one transaction, which also
// journals each one's return to in_progress, and gets back everything its runs
// start from (the rows, their agents' specs): no read follows a claim.
import type { AgentSpecFields } from '../../generated/schemas.js';
import { effectiveSpec } from '../agents/effective-spec.js';
import type { ConnectionRow } from '../models/connections.js';
import { claimRunnable, extendLease, handBackLease, type ClaimedRow, type RunRow } from '../responses/lease-writes.js';
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
  /** The spec of the agent revision the response pinned, under the limits its options narrow it to. */
  spec: AgentSpecFields;
  /**
   * The model connection the spec names, as the admission that claimed it read
   * it a moment ago (null: none): the first model step uses it instead of reading
   * it again. Absent for a claim from the queue, whose steps read it themselves.
   */
  connection?: ConnectionRow | null;
}

export { OPEN_CALLS, type RunRow } from '../responses/lease-writes.js';

/** Claims up to `limit` runnable responses. */
const claimRows = (db: Queryable, workerId: string, leaseSeconds: number, limit: number): Promise<ClaimedRow[]> =>
  claimRunnable(db, workerId, leaseSeconds, CLAIMABLE_STATUSES, limit);

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
    runs.push({ claim, row: runRow, spec: effectiveSpec(spec, runRow.options) });
  }
  return runs;
}

/** Claims up to `limit` runnable responses in the caller's transaction, oldest first, journaling each one's return to in_progress. */
export async function claimWork(tx: Queryable, workerId: string, leaseSeconds: number, limit: number): Promise<ClaimedRun[]> {
  return announceClaims(tx, await claimRows(tx, workerId, leaseSeconds, limit));
}

/** Extends the lease. `held` is false when the token is stale (someone else owns the response now). */
export const renewLease = (db: Queryable, claim: Claim, leaseSeconds: number): Promise<{ held: boolean; cancelRequested: boolean }> =>
  extendLease(db, claim.responseId, claim.leaseToken, leaseSeconds);

/**
 * Hands the response back: any worker may take it over once `afterSeconds` have
 * passed (0: at once, as on a graceful shutdown). The NOTIFY wakes idle workers
 * in every process instead of leaving them to their next poll.
 */
export const releaseLease = (db: Queryable, claim: Claim, afterSeconds = 0): Promise<void> =>
  handBackLease(db, claim.responseId, claim.leaseToken, afterSeconds);
