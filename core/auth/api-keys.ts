// API keys belong to one project, are shown once at creation and stored as a
// SHA-256 hash: they are 190-bit random secrets, so a slow KDF buys nothing.
import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../ids.js';
import { PalaiError } from '../errors/palai-error.js';
import type { Db, Queryable } from '../store/db.js';

const KEY_PREFIX = 'palai_sk_';
const KEY_NAME = /^[^\p{C}]{1,64}$/u;

export interface ApiKeyInfo {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface CreatedApiKey extends ApiKeyInfo {
  /** The secret itself; never stored, never shown again. */
  secret: string;
}

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

export function generateSecret(): string {
  return KEY_PREFIX + randomBytes(24).toString('base64url');
}

export async function createApiKey(db: Queryable, projectId: string, name = 'default', secret: string = generateSecret()): Promise<CreatedApiKey> {
  if (secret.length < 16) throw new PalaiError('invalid-request', 'An API key must be at least 16 characters long.');
  // The name is a label in one-line listings: it must be visible and fit a column.
  if (!KEY_NAME.test(name)) throw new PalaiError('invalid-request', `Invalid API key name ${JSON.stringify(name)}: use 1–64 printable characters.`);
  const { rows } = await db.query<ApiKeyInfo>(
    `INSERT INTO api_keys (id, project_id, name, prefix, secret_hash) VALUES ($1, $2, $3, $4, $5)
     RETURNING id, project_id, name, prefix, created_at, last_used_at, revoked_at`,
    [newId('key'), projectId, name, secret.slice(0, 12), hashSecret(secret)],
  );
  return { ...rows[0], secret };
}

/** The project a presented secret belongs to, or null for an unknown or revoked key. */
export async function authenticate(db: Db, secret: string): Promise<{ projectId: string; keyId: string } | null> {
  const { rows } = await db.query<{ id: string; project_id: string }>('SELECT id, project_id FROM api_keys WHERE secret_hash = $1 AND revoked_at IS NULL', [
    hashSecret(secret),
  ]);
  const key = rows[0];
  return key ? { projectId: key.project_id, keyId: key.id } : null;
}

export async function listApiKeys(db: Db, projectId?: string): Promise<ApiKeyInfo[]> {
  const { rows } = await db.query<ApiKeyInfo>(
    `SELECT id, project_id, name, prefix, created_at, last_used_at, revoked_at FROM api_keys
     WHERE $1::text IS NULL OR project_id = $1 ORDER BY id`,
    [projectId ?? null],
  );
  return rows;
}

export async function findApiKey(db: Db, keyId: string): Promise<ApiKeyInfo | null> {
  const { rows } = await db.query<ApiKeyInfo>('SELECT id, project_id, name, prefix, created_at, last_used_at, revoked_at FROM api_keys WHERE id = $1', [keyId]);
  return rows[0] ?? null;
}

/** False when the key is unknown or already revoked. */
export async function revokeApiKey(db: Db, keyId: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [keyId]);
  return rowCount > 0;
}
