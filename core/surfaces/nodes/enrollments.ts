// Enrollment tokens: a node presents one until it is paired. The token is in
// the answer that makes it only; the row keeps its SHA-256, so a leaked
// database does not leak a usable token.
import { createHash, randomBytes } from 'node:crypto';
import type { CreateNodeEnrollmentRequest, NodeEnrollment, NodeEnrollmentCreated } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import { reserveKey, type IdempotencyClaim } from '../../idempotency/idempotency.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../../pagination.js';
import type { Db, Queryable } from '../../store/db.js';
import { enrollmentView, type EnrollmentRow } from './node-views.js';

export const DEFAULT_ENROLLMENT_SECONDS = 3600;
export const MAX_ENROLLMENT_SECONDS = 86_400;

/** `pnen_` and 32 random bytes, base64url: recognisable in a config file, unguessable. */
const newToken = (): string => `pnen_${randomBytes(32).toString('base64url')}`;

export const tokenHash = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export async function createEnrollment(
  db: Db,
  projectId: string,
  request: Partial<CreateNodeEnrollmentRequest> = {},
  idem?: IdempotencyClaim,
): Promise<NodeEnrollmentCreated> {
  const seconds = Math.min(request.expires_in_seconds ?? DEFAULT_ENROLLMENT_SECONDS, MAX_ENROLLMENT_SECONDS);
  const token = newToken();
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<EnrollmentRow>(
      `INSERT INTO node_enrollments (id, project_id, name, token_hash, max_uses, expires_at)
       VALUES (palai_new_id('nen'), $1, $2, $3, $4, now() + make_interval(secs => $5)) RETURNING *`,
      [projectId, request.name ?? null, tokenHash(token), request.max_uses ?? 1, seconds],
    );
    // The answer holds the token, so it is not recorded: a repeat answers with the enrollment alone.
    await reserveKey(tx, projectId, idem, rows[0].id);
    return { ...enrollmentView(rows[0]), token };
  });
}

export async function requireEnrollment(q: Queryable, projectId: string, id: string, forUpdate = false): Promise<EnrollmentRow> {
  const { rows } = await q.query<EnrollmentRow>(`SELECT * FROM node_enrollments WHERE project_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [
    projectId,
    id,
  ]);
  if (!rows[0]) throw new PalaiError('not-found', `No node enrollment with id ${JSON.stringify(id)} in this project.`);
  return rows[0];
}

export async function listEnrollments(q: Queryable, projectId: string, page: PageRequest): Promise<Page<NodeEnrollment>> {
  const { rows } = await q.query<EnrollmentRow>('SELECT * FROM node_enrollments WHERE project_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3', [
    projectId,
    page.after ?? null,
    fetchSize(page),
  ]);
  return toPage(rows, page, enrollmentView);
}

/** Idempotent: a revoked token stays revoked at its first revocation's time. */
export async function revokeEnrollment(db: Db, projectId: string, id: string): Promise<NodeEnrollment> {
  return db.transaction(async (tx) => {
    await requireEnrollment(tx, projectId, id, true);
    const { rows } = await tx.query<EnrollmentRow>(
      'UPDATE node_enrollments SET revoked_at = coalesce(revoked_at, now()) WHERE project_id = $1 AND id = $2 RETURNING *',
      [projectId, id],
    );
    return enrollmentView(rows[0]);
  });
}

/** Counts one use of a usable token (not revoked, not expired, not used up) and returns it; null, changing nothing, otherwise. */
export async function useEnrollment(tx: Queryable, token: string): Promise<EnrollmentRow | null> {
  const { rows } = await tx.query<EnrollmentRow>(
    `UPDATE node_enrollments SET uses = uses + 1
     WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now() AND uses < max_uses RETURNING *`,
    [tokenHash(token)],
  );
  return rows[0] ?? null;
}
