// Project secrets (POST /v1/secrets): a value stored once under a name, for a
// node command's environment (docs/security.md#secrets-as-ephemeral-input).
// Only the secret store holds the value, sealed; answers carry the id, the
// name and the last four characters of a long value, never the value.
import { createHash } from 'node:crypto';
import type { Secret, SecretList } from '../../generated/schemas.js';
import { PalaiError } from '../errors/palai-error.js';
import { unixSeconds } from '../json.js';
import type { Db, Queryable } from '../store/db.js';
import type { SecretStore } from './secret-port.js';

export const PROJECT_SECRET_PURPOSE = 'project-secret';
/** The most named secrets a project keeps. */
export const MAX_PROJECT_SECRETS = 1000;

interface Row {
  id: string;
  name: string;
  last4: string | null;
  created_at: Date;
}

const view = (row: Row): Secret => ({ id: row.id, object: 'secret', name: row.name, last4: row.last4, created_at: unixSeconds(row.created_at) ?? 0 });

export async function createProjectSecret(db: Db, store: SecretStore, projectId: string, name: string, value: string): Promise<Secret> {
  return db.transaction(async (tx) => {
    const { rows: taken } = await tx.query<{ named: boolean; count: string }>(
      `SELECT EXISTS (SELECT 1 FROM secrets WHERE project_id = $1 AND name = $2) AS named,
         (SELECT count(*) FROM secrets WHERE project_id = $1 AND purpose = $3) AS count`,
      [projectId, name, PROJECT_SECRET_PURPOSE],
    );
    if (taken[0].named) throw new PalaiError('conflict', `The project has a secret named ${JSON.stringify(name)} already; delete it first.`);
    if (Number(taken[0].count) >= MAX_PROJECT_SECRETS) throw new PalaiError('conflict', `The project holds ${MAX_PROJECT_SECRETS} secrets, the most it may.`);
    const ref = await store.put(tx, projectId, PROJECT_SECRET_PURPOSE, value);
    const { rows } = await tx.query<Row>(
      'UPDATE secrets SET name = $2, value_digest = $3, value_length = $4 WHERE id = $1 RETURNING id, name, last4, created_at',
      [ref.id, name, projectSecretDigest(value), value.length],
    );
    return view(rows[0]);
  });
}

export async function listProjectSecrets(q: Queryable, projectId: string): Promise<SecretList> {
  const { rows } = await q.query<Row>('SELECT id, name, last4, created_at FROM secrets WHERE project_id = $1 AND purpose = $2 ORDER BY created_at, id', [
    projectId,
    PROJECT_SECRET_PURPOSE,
  ]);
  return { object: 'list', data: rows.map(view), has_more: false };
}

/**
 * A value's fingerprint, kept beside its sealed value: `sha256:` and the hex
 * SHA-256 of its UTF-8 bytes, the digest a node command's plan binds it by (the
 * node protocol's secret digest, which tests hold to the same value).
 */
export const projectSecretDigest = (value: string): string => `sha256:${createHash('sha256').update(value, 'utf8').digest('hex')}`;

export interface FoundProjectSecret {
  id: string;
  name: string;
  /** Its fingerprint; null for a secret stored before fingerprints were kept. */
  value_digest: string | null;
  value_length: number | null;
}

/** The project secret an id (`sec_…`) or a name stands for, or null. */
export async function findProjectSecret(q: Queryable, projectId: string, ref: string): Promise<FoundProjectSecret | null> {
  const { rows } = await q.query<FoundProjectSecret>(
    'SELECT id, name, value_digest, value_length FROM secrets WHERE project_id = $1 AND purpose = $2 AND (id = $3 OR name = $3) ORDER BY (id = $3) DESC LIMIT 1',
    [projectId, PROJECT_SECRET_PURPOSE, ref],
  );
  return rows[0] ?? null;
}

export async function deleteProjectSecret(db: Db, store: SecretStore, projectId: string, ref: string): Promise<string> {
  return db.transaction(async (tx) => {
    const found = await findProjectSecret(tx, projectId, ref);
    if (!found) throw new PalaiError('not-found', `The project has no secret ${JSON.stringify(ref)}.`);
    await store.remove(tx, projectId, found.id);
    return found.id;
  });
}
