// Model connections: a project's named way to reach a provider — base URL,
// default model, and a key that is either kept in the secret store (the row
// holds its reference) or read from an environment variable. The API shows only
// whether a key is set and its last four. A key from the environment may go
// only to the base URL the operator bound it to.
import type { CreateModelConnectionRequest, ModelConnection, ModelProvider } from '../../generated/schemas.js';
import type { KeyBinding } from '../config.js';
import { PalaiError } from '../errors/palai-error.js';
import { newId } from '../ids.js';
import { recordAnswer, reserveKey, type IdempotencyClaim } from '../idempotency/idempotency.js';
import { unixSeconds } from '../json.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../pagination.js';
import { resourceLookup } from '../resources/find-by-ref.js';
import type { SecretStore } from '../secrets/secret-port.js';
import { removeSealed, sealValues, type Sealing } from '../secrets/sealed-fields.js';
import { isUniqueViolation, type Db, type Queryable } from '../store/db.js';
import { sameBaseUrl, shownUrl } from './key-binding.js';

export interface ConnectionRow {
  id: string;
  project_id: string;
  name: string;
  provider: ModelProvider;
  base_url: string | null;
  /** The stored key in the secret store; null when the key comes from the environment or there is none. */
  api_key_secret_id: string | null;
  /** Kept beside the reference so a connection is shown without asking the secret store. */
  api_key_last4: string | null;
  api_key_env: string | null;
  default_model: string | null;
  created_at: Date;
}

export const connectionView = (row: ConnectionRow): ModelConnection => ({
  id: row.id,
  object: 'model_connection',
  name: row.name,
  provider: row.provider,
  base_url: row.base_url,
  api_key: { set: row.api_key_secret_id !== null, last4: row.api_key_last4 },
  api_key_env: row.api_key_env,
  default_model: row.default_model,
  created_at: unixSeconds(row.created_at)!,
});

/** The connection named by id (`mconn_…`) or name: `findConnection` answers null, `requireConnection` not-found. */
export const { find: findConnection, require: requireConnection } = resourceLookup<ConnectionRow>(
  { table: 'model_connections', idPrefix: 'mconn_' },
  (ref) => new PalaiError('not-found', `No model connection with id or name ${JSON.stringify(ref)} in this project.`),
);

/** A connection's stored key; without PALAI_SECRET_KEY, says what the caller can do instead. */
const MODEL_KEY: Sealing = {
  purpose: 'model-key',
  noSecretKey: () => new PalaiError('invalid-request', 'Storing a key needs PALAI_SECRET_KEY to be set on the server; or use api_key_env.'),
};

export async function createConnection(
  db: Db,
  secrets: SecretStore,
  projectId: string,
  request: CreateModelConnectionRequest,
  keyEnvAllowlist: readonly KeyBinding[],
  idem?: IdempotencyClaim,
): Promise<ModelConnection> {
  if (request.api_key_env !== undefined) checkKeyBinding(request, keyEnvAllowlist);
  if (request.api_key !== undefined && request.api_key_env !== undefined) {
    throw new PalaiError('invalid-request', 'Give either api_key or api_key_env, not both.', {
      errors: [{ pointer: '/api_key_env', detail: 'conflicts with api_key' }],
    });
  }
  const id = newId('mconn');
  try {
    return await db.transaction(async (tx) => {
      await reserveKey(tx, projectId, idem, id);
      // In this transaction: a connection that is not created leaves no secret behind.
      const { api_key: key } = await sealValues(tx, secrets, projectId, MODEL_KEY, { api_key: request.api_key });
      const { rows } = await tx.query<ConnectionRow>(
        `INSERT INTO model_connections (id, project_id, name, provider, base_url, api_key_secret_id, api_key_last4, api_key_env, default_model)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
        [
          id,
          projectId,
          request.name,
          request.provider,
          request.base_url ?? null,
          key?.id ?? null,
          key?.last4 ?? null,
          request.api_key_env ?? null,
          request.default_model ?? null,
        ],
      );
      const view = connectionView(rows[0]);
      await recordAnswer(tx, projectId, idem, 201, view, id);
      return view;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new PalaiError('conflict', `A model connection named ${JSON.stringify(request.name)} already exists.`);
    throw error;
  }
}

/**
 * Naming any variable, or sending an allowed one anywhere, would let an API caller
 * have the server send its own secret to a URL of the caller's choosing.
 */
function checkKeyBinding(request: CreateModelConnectionRequest, keyEnvAllowlist: readonly KeyBinding[]): void {
  const variable = request.api_key_env!;
  const binding = keyEnvAllowlist.find((b) => b.variable === variable);
  if (!binding) {
    const names = keyEnvAllowlist.map((b) => b.variable).join(', ') || 'no variable';
    throw new PalaiError('invalid-request', `api_key_env may name only ${names} (the operator's PALAI_KEY_ENV_ALLOWLIST).`, {
      errors: [{ pointer: '/api_key_env', detail: 'is not in PALAI_KEY_ENV_ALLOWLIST' }],
    });
  }
  if (request.base_url !== undefined && !sameBaseUrl(request.provider, request.base_url, binding.baseUrl)) {
    throw new PalaiError(
      'invalid-request',
      `The key from ${variable} may be sent only to ${shownUrl(binding.baseUrl)}, the base URL the operator bound it to. ` +
        'Leave base_url out, or store a key of your own with api_key to use another base URL.',
      { errors: [{ pointer: '/base_url', detail: `is not the base URL ${variable} is bound to` }] },
    );
  }
}

export async function listConnections(db: Db, projectId: string, page: PageRequest): Promise<Page<ModelConnection>> {
  const { rows } = await db.query<ConnectionRow>(
    'SELECT * FROM model_connections WHERE project_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3',
    [projectId, page.after ?? null, fetchSize(page)],
  );
  return toPage(rows, page, connectionView);
}

/** Deletes the connection and, in the same transaction, its stored key. */
export async function deleteConnection(db: Db, secrets: SecretStore, projectId: string, ref: string): Promise<string> {
  return db.transaction(async (tx) => {
    const row = await requireConnection(tx, projectId, ref);
    await tx.query('DELETE FROM model_connections WHERE id = $1', [row.id]);
    await removeSealed(tx, secrets, projectId, [row.api_key_secret_id]);
    return row.id;
  });
}
