// The policy gate: a wake is admitted only under an approved policy that has
// not expired. Anything else skips the occurrence, before any model is called,
// and blocks the objective with the reason.
import type { ObjectivePolicyDocument, WakeSkipReason } from '../../../generated/schemas.js';
import type { Queryable } from '../../store/db.js';

export const NO_POLICY_YET = 'no-approved-policy: no version of the policy is approved yet.';

/** The approved policy a wake runs under. */
export interface ApprovedPolicy {
  version: number;
  hash: string;
  document: ObjectivePolicyDocument;
}

export type PolicyVerdict = { policy: ApprovedPolicy } | { skip: WakeSkipReason; reason: string };

interface GateRow {
  version: number;
  hash: string;
  document: ObjectivePolicyDocument;
  status: string;
  expired: boolean;
  expires_at: Date | null;
}

/** The newest approved or revoked version decides (a draft is nothing yet); `now` is the store's. */
export async function policyVerdict(q: Queryable, objectiveId: string): Promise<PolicyVerdict> {
  const { rows } = await q.query<GateRow>(
    `SELECT version, hash, document, status, expires_at, coalesce(expires_at <= now(), false) AS expired FROM objective_policies
     WHERE objective_id = $1 AND status IN ('approved', 'revoked') ORDER BY (status = 'approved') DESC, version DESC LIMIT 1`,
    [objectiveId],
  );
  return verdictOf(rows[0]);
}

export function verdictOf(row: GateRow | undefined): PolicyVerdict {
  if (!row) return { skip: 'no-approved-policy', reason: NO_POLICY_YET };
  if (row.status === 'revoked')
    return { skip: 'policy-revoked', reason: `policy-revoked: version ${row.version} (${row.hash}) was revoked and no other is approved.` };
  if (row.expired) {
    return { skip: 'policy-expired', reason: `policy-expired: version ${row.version} (${row.hash}) expired at ${row.expires_at?.toISOString()}.` };
  }
  return { policy: { version: row.version, hash: row.hash, document: row.document } };
}

/** Why a wake could not be admitted now, or null when a policy allows one. */
export async function blockReason(q: Queryable, objectiveId: string): Promise<string | null> {
  const verdict = await policyVerdict(q, objectiveId);
  return 'skip' in verdict ? verdict.reason : null;
}
