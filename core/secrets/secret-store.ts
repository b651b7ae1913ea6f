// The secret store on the `secrets` table: each row one value sealed with the
// SecretBox, owned by a project. The ciphertext is written and read here and
// nowhere else; the queries return ids and last fours, and only reveal returns
// a value. The composition root builds one store per process.
import type { KeyBinding } from '../config.js';
import { newId } from '../ids.js';
import type { Queryable } from '../store/db.js';
import type { SecretBox } from './secret-box.js';
import { SecretUnavailableError, type SecretPurpose, type SecretRef, type SecretStore } from './secret-port.js';
import { captureServerKeys, serverKeyNames } from './server-keys.js';

export interface SecretStoreOptions {
  /** Seals and opens stored secrets; null when PALAI_SECRET_KEY is unset (nothing can be stored or revealed). */
  box: SecretBox | null;
  /** The environment to take the operator's keys from, read once here: the process's, or a test's own. */
  env: Readonly<Record<string, string | undefined>>;
  /** Which variables the operator allow-listed (PALAI_KEY_ENV_ALLOWLIST); the provider variables are always included. */
  policy: { keyEnvAllowlist: readonly KeyBinding[] };
}

/** Long enough that its last four say nothing useful about the rest. */
const SHOWN_FROM_LENGTH = 16;
const last4Of = (plaintext: string): string | null => (plaintext.length >= SHOWN_FROM_LENGTH ? plaintext.slice(-4) : null);

const missing = (id: string) => new SecretUnavailableError('missing', `No secret with id ${JSON.stringify(id)} in this project.`);

export function createSecretStore({ box, env, policy }: SecretStoreOptions): SecretStore {
  const serverKeys = captureServerKeys(env, serverKeyNames(policy.keyEnvAllowlist));

  /** Seals, or refuses without a secret key. The message never quotes the value. */
  const seal = (plaintext: string): string => {
    if (!box) throw new SecretUnavailableError('no-secret-key', 'Storing a secret needs PALAI_SECRET_KEY to be set on the server.');
    return box.seal(plaintext);
  };

  return {
    async put(q: Queryable, projectId: string, purpose: SecretPurpose, plaintext: string): Promise<SecretRef> {
      const ciphertext = seal(plaintext);
      const { rows } = await q.query<SecretRef>(
        'INSERT INTO secrets (id, project_id, purpose, ciphertext, last4) VALUES ($1, $2, $3, $4, $5) RETURNING id, last4',
        [newId('sec'), projectId, purpose, ciphertext, last4Of(plaintext)],
      );
      return rows[0];
    },

    async reveal(q: Queryable, projectId: string, id: string): Promise<string> {
      const { rows } = await q.query<{ ciphertext: string }>('SELECT ciphertext FROM secrets WHERE project_id = $1 AND id = $2', [projectId, id]);
      if (rows.length === 0) throw missing(id);
      if (!box) throw new SecretUnavailableError('no-secret-key', `Secret ${id} is stored, but PALAI_SECRET_KEY is not set on this server.`);
      try {
        return box.open(rows[0].ciphertext);
      } catch {
        // The cipher's own error says nothing useful and is not ours to pass on.
        throw new SecretUnavailableError('undecryptable', `Secret ${id} cannot be decrypted with this PALAI_SECRET_KEY.`);
      }
    },

    async replace(q: Queryable, projectId: string, id: string, plaintext: string): Promise<SecretRef> {
      const ciphertext = seal(plaintext);
      const { rows } = await q.query<SecretRef>(
        'UPDATE secrets SET ciphertext = $3, last4 = $4, updated_at = now() WHERE project_id = $1 AND id = $2 RETURNING id, last4',
        [projectId, id, ciphertext, last4Of(plaintext)],
      );
      if (rows.length === 0) throw missing(id);
      return rows[0];
    },

    async remove(q: Queryable, projectId: string, id: string): Promise<boolean> {
      const { rowCount } = await q.query('DELETE FROM secrets WHERE project_id = $1 AND id = $2', [projectId, id]);
      return rowCount > 0;
    },

    serverKey(name: string): string | undefined {
      return serverKeys.get(name);
    },
  };
}
