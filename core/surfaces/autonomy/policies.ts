// Delegation policies, versioned per objective. A draft carries the hash of its
// document's RFC 8785 canonical JSON (key order and whitespace never change
// it); a person approves a version by naming that hash, so what runs is exactly
// what was reviewed. At most one version is approved; approving another
// supersedes it.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { ObjectivePolicy, ObjectivePolicyDocument, ObjectivePolicyList } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import type { Db, Queryable } from '../../store/db.js';
import { isTimeZone } from './cron.js';
import { assertOpen, requireObjective } from './objectives.js';
import { policyView, type PolicyRow } from './objective-views.js';
import { blockReason } from './policy-gate.js';

/** The largest canonical document kept. */
export const MAX_POLICY_BYTES = 64 * 1024;

/** `sha256:` and the hex SHA-256 of the document's canonical JSON, with that JSON. */
export function policyHash(document: ObjectivePolicyDocument): { hash: string; canonical: string } {
  const canonical = canonicalize(document);
  if (canonical === undefined) throw new TypeError('a policy document is a JSON object');
  return { hash: `sha256:${createHash('sha256').update(canonical).digest('hex')}`, canonical };
}

const invalid = (pointer: string, detail: string) =>
  new PalaiError('validation-failed', `The policy document is not valid: ${pointer.slice('/document/'.length) || 'document'} ${detail}.`, {
    errors: [{ pointer, detail }],
  });

/** What the schema cannot say: the size, the time zone, an expiry already past. */
function checkDocument(document: ObjectivePolicyDocument, canonical: string): void {
  const bytes = Buffer.byteLength(canonical, 'utf8');
  if (bytes > MAX_POLICY_BYTES) throw invalid('/document', `is ${bytes} bytes of canonical JSON; at most ${MAX_POLICY_BYTES}`);
  if (document.timezone !== undefined && !isTimeZone(document.timezone)) throw invalid('/document/timezone', 'is not an IANA time zone');
  if (document.expires_at != null && document.expires_at * 1000 <= Date.now()) throw invalid('/document/expires_at', 'is in the past');
}

async function requirePolicy(q: Queryable, objectiveId: string, version: number): Promise<PolicyRow> {
  const { rows } = await q.query<PolicyRow>('SELECT * FROM objective_policies WHERE objective_id = $1 AND version = $2 FOR UPDATE', [objectiveId, version]);
  if (!rows[0]) throw new PalaiError('not-found', `Objective ${objectiveId} has no policy version ${version}.`);
  return rows[0];
}

/** A draft of the document; the same document again, while it is a draft, answers with that version. */
export async function draftPolicy(db: Db, projectId: string, objectiveId: string, document: ObjectivePolicyDocument): Promise<ObjectivePolicy> {
  const { hash, canonical } = policyHash(document);
  checkDocument(document, canonical);
  return db.transaction(async (tx) => {
    // Locked: versions are numbered in order, and approvals of this objective wait for it.
    const objective = await requireObjective(tx, projectId, objectiveId, true);
    assertOpen(objective);
    const { rows: same } = await tx.query<PolicyRow>("SELECT * FROM objective_policies WHERE objective_id = $1 AND hash = $2 AND status = 'draft'", [
      objective.id,
      hash,
    ]);
    if (same[0]) return policyView(same[0]);
    const { rows } = await tx.query<PolicyRow>(
      `INSERT INTO objective_policies (objective_id, version, document, hash, status, expires_at)
       SELECT $1, coalesce(max(version), 0) + 1, $2::jsonb, $3, 'draft', CASE WHEN $4::bigint IS NULL THEN NULL ELSE to_timestamp($4::bigint) END
       FROM objective_policies WHERE objective_id = $1 RETURNING *`,
      [objective.id, canonical, hash, document.expires_at ?? null],
    );
    return policyView(rows[0]);
  });
}

export async function listPolicies(q: Queryable, projectId: string, objectiveId: string): Promise<ObjectivePolicyList> {
  const objective = await requireObjective(q, projectId, objectiveId);
  const { rows } = await q.query<PolicyRow>('SELECT * FROM objective_policies WHERE objective_id = $1 ORDER BY version DESC', [objective.id]);
  return { object: 'list', data: rows.map(policyView), has_more: false };
}

/** Approves a draft whose hash is `hash`; the approved version before it is superseded, a blocked objective active again. */
export async function approvePolicy(db: Db, projectId: string, objectiveId: string, version: number, hash: string): Promise<ObjectivePolicy> {
  return db.transaction(async (tx) => {
    // The objective's row first: two approvals racing take turns here, and the second finds no draft.
    const objective = await requireObjective(tx, projectId, objectiveId, true);
    assertOpen(objective);
    const policy = await requirePolicy(tx, objective.id, version);
    if (policy.status !== 'draft') {
      throw new PalaiError('conflict', `Policy version ${version} of ${objective.id} is ${policy.status}; only a draft can be approved.`);
    }
    if (policy.hash !== hash) {
      // The stored hash is not repeated here: whoever approves reads the version (GET …/policies) and names the hash it shows.
      throw new PalaiError(
        'policy-hash-mismatch',
        `${JSON.stringify(hash)} is not the hash of policy version ${version} of ${objective.id}; read that version and approve the hash it shows.`,
        {
          errors: [{ pointer: '/hash', detail: 'is not the hash of this version' }],
        },
      );
    }
    // By the store's clock, as the gate reads it.
    const { rows: expired } = await tx.query<{ expired: boolean }>('SELECT coalesce($1::timestamptz <= now(), false) AS expired', [policy.expires_at]);
    if (expired[0].expired && policy.expires_at !== null) {
      throw new PalaiError('conflict', `Policy version ${version} of ${objective.id} expired at ${policy.expires_at.toISOString()}; it cannot be approved.`);
    }
    await tx.query("UPDATE objective_policies SET status = 'superseded' WHERE objective_id = $1 AND status = 'approved'", [objective.id]);
    const { rows } = await tx.query<PolicyRow>(
      "UPDATE objective_policies SET status = 'approved', approved_at = now() WHERE objective_id = $1 AND version = $2 RETURNING *",
      [objective.id, version],
    );
    if (objective.status === 'blocked') {
      await tx.query("UPDATE objectives SET status = 'active', blocked_reason = NULL, updated_at = now() WHERE id = $1", [objective.id]);
    }
    return policyView(rows[0]);
  });
}

/** Idempotent. Revoking the approved version blocks an active objective: no wake is admitted under it again. */
export async function revokePolicy(db: Db, projectId: string, objectiveId: string, version: number): Promise<ObjectivePolicy> {
  return db.transaction(async (tx) => {
    const objective = await requireObjective(tx, projectId, objectiveId, true);
    const policy = await requirePolicy(tx, objective.id, version);
    if (policy.status === 'revoked') return policyView(policy);
    const { rows } = await tx.query<PolicyRow>(
      "UPDATE objective_policies SET status = 'revoked', revoked_at = now() WHERE objective_id = $1 AND version = $2 RETURNING *",
      [objective.id, version],
    );
    if (policy.status === 'approved' && objective.status === 'active') {
      await tx.query("UPDATE objectives SET status = 'blocked', blocked_reason = $2, updated_at = now() WHERE id = $1", [
        objective.id,
        await blockReason(tx, objective.id),
      ]);
    }
    return policyView(rows[0]);
  });
}
