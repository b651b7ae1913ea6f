// Idempotent requests: an `Idempotency-Key` is reserved inside the transaction
// that does the work, so the work and the key commit together or not at all.
// A duplicate blocks on the key's unique index until the first commits, then
// finds it and replays its result; the same key with another request is refused.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../json.js';
import { PalaiError } from '../errors/palai-error.js';
import type { Queryable } from '../store/db.js';

export interface IdempotencyClaim {
  key: string;
  /** Hash of the operation, its path parameters and its body. */
  fingerprint: string;
  operation: string;
  retentionHours: number;
}

export interface IdempotencyRecord {
  operation: string;
  fingerprint: string;
  resource_id: string | null;
  status: number | null;
  body: unknown;
}

/** Thrown inside the transaction when the key is already taken; the transaction rolls back. */
export class DuplicateIdempotencyKey extends Error {
  constructor(readonly key: string) {
    super(`idempotency key ${key} is already in use`);
    this.name = 'DuplicateIdempotencyKey';
  }
}

export function fingerprint(operation: string, params: Record<string, string>, body: unknown): string {
  return createHash('sha256').update(canonicalJson({ operation, params, body: body ?? null })).digest('hex');
}

/** Takes the key for this transaction's work (an expired record of it is replaced). */
export async function reserveKey(tx: Queryable, projectId: string, claim: IdempotencyClaim | undefined, resourceId: string | null = null): Promise<void> {
  if (!claim) return;
  const { rows } = await tx.query(
    `INSERT INTO idempotency_keys (project_id, key, operation, fingerprint, resource_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(hours => $6))
     ON CONFLICT (project_id, key) DO UPDATE SET operation = EXCLUDED.operation, fingerprint = EXCLUDED.fingerprint,
       resource_id = EXCLUDED.resource_id, status = NULL, body = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
     WHERE idempotency_keys.expires_at < now()
     RETURNING key`,
    [projectId, claim.key, claim.operation, claim.fingerprint, resourceId, claim.retentionHours],
  );
  if (rows.length === 0) throw new DuplicateIdempotencyKey(claim.key);
}

/** Records the answer to replay, for operations whose answer is not re-derived from a resource. */
export async function recordAnswer(tx: Queryable, projectId: string, claim: IdempotencyClaim | undefined, status: number, body: unknown, resourceId: string): Promise<void> {
  if (!claim) return;
  await tx.query('UPDATE idempotency_keys SET status = $3, body = $4, resource_id = $5 WHERE project_id = $1 AND key = $2', [
    projectId,
    claim.key,
    status,
    JSON.stringify(body),
    resourceId,
  ]);
}

export async function findKey(db: Queryable, projectId: string, key: string): Promise<IdempotencyRecord | null> {
  const { rows } = await db.query<IdempotencyRecord>(
    'SELECT operation, fingerprint, resource_id, status, body FROM idempotency_keys WHERE project_id = $1 AND key = $2 AND expires_at > now()',
    [projectId, key],
  );
  return rows[0] ?? null;
}

/** The earlier record must be for the same request; anything else is a conflict. */
export function assertSameRequest(record: IdempotencyRecord, claim: IdempotencyClaim): void {
  if (record.fingerprint !== claim.fingerprint) {
    throw new PalaiError('idempotency-conflict', `Idempotency-Key ${JSON.stringify(claim.key)} was already used with a different request (${record.operation}).`);
  }
}

export async function purgeExpiredKeys(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM idempotency_keys WHERE expires_at < now()');
  return rowCount;
}
