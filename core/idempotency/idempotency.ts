// Idempotent requests: a key (an HTTP Idempotency-Key, an A2A messageId, ...)
// is reserved inside the transaction that does the work, so the work and the key
// commit together or not at all. A duplicate blocks on the key's unique index
// until the first commits, then finds it and replays its result. Keys are scoped
// by project and source; the inbox (inbox.ts) is the one caller that reads them.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../json.js';
import type { Queryable } from '../store/db.js';
import { DuplicateIdempotencyKey, type IdempotencyClaim, type InboxRecord, type InboxSource } from './inbox-port.js';
import { inboxKeyTerm } from './inbox-sources.js';

export { DuplicateIdempotencyKey, type IdempotencyClaim } from './inbox-port.js';

/** An unexpired record, with the fingerprint the inbox compares. */
export interface IdempotencyRecord extends InboxRecord {
  fingerprint: string;
}

export function fingerprint(operation: string, params: Record<string, string>, body: unknown): string {
  return createHash('sha256')
    .update(canonicalJson({ operation, params, body: body ?? null }))
    .digest('hex');
}

/** Takes the key for this transaction's work (an expired record of it is replaced). */
export async function reserveKey(tx: Queryable, projectId: string, claim: IdempotencyClaim | undefined, resourceId: string | null = null): Promise<void> {
  if (!claim) return;
  inboxKeyTerm(claim.source); // refuses a source nobody declared
  const { rows } = await tx.query(
    `INSERT INTO idempotency_keys (project_id, source, key, operation, fingerprint, resource_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(hours => $7))
     ON CONFLICT (project_id, source, key) DO UPDATE SET operation = EXCLUDED.operation, fingerprint = EXCLUDED.fingerprint,
       resource_id = EXCLUDED.resource_id, status = NULL, body = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
     WHERE idempotency_keys.expires_at < now()
     RETURNING key`,
    [projectId, claim.source, claim.key, claim.operation, claim.fingerprint, resourceId, claim.retentionHours],
  );
  if (rows.length === 0) throw new DuplicateIdempotencyKey(claim.source, claim.key);
}

/** Records the answer to replay, for operations whose answer is not re-derived from a resource. */
export async function recordAnswer(
  tx: Queryable,
  projectId: string,
  claim: IdempotencyClaim | undefined,
  status: number,
  body: unknown,
  resourceId: string,
): Promise<void> {
  if (!claim) return;
  await tx.query('UPDATE idempotency_keys SET status = $4, body = $5, resource_id = $6 WHERE project_id = $1 AND source = $2 AND key = $3', [
    projectId,
    claim.source,
    claim.key,
    status,
    JSON.stringify(body),
    resourceId,
  ]);
}

interface RecordRow {
  operation: string;
  fingerprint: string;
  resource_id: string | null;
  status: number | null;
  body: unknown;
}

/** The unexpired record of this key, or null: an expired one counts as never seen. */
export async function findRecord(db: Queryable, projectId: string, source: InboxSource, key: string): Promise<IdempotencyRecord | null> {
  const { rows } = await db.query<RecordRow>(
    `SELECT operation, fingerprint, resource_id, status, body FROM idempotency_keys
     WHERE project_id = $1 AND source = $2 AND key = $3 AND expires_at > now()`,
    [projectId, source, key],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    operation: row.operation,
    fingerprint: row.fingerprint,
    resourceId: row.resource_id,
    answer: row.status !== null && row.body !== null ? { status: row.status, body: row.body } : null,
  };
}

export async function purgeExpiredKeys(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM idempotency_keys WHERE expires_at < now()');
  return rowCount;
}
