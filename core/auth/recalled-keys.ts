// A key this process has authenticated before, presented again. Looking it up
// is a statement of its own on every request; for the one request that matters
// most (creating a response) the kernel checks it instead in the first
// statement the request makes anyway — the agent's read — so the key is still
// checked against the live table, in the same snapshot as what it reads and
// before anything is written, and a revoked key stops at once. The memory only
// says which project to read for; it never vouches for a key.
import { PalaiError } from '../errors/palai-error.js';
import type { Queryable } from '../store/db.js';
import { hashSecret } from './api-keys.js';

/** The most keys a process remembers; past it, the oldest is forgotten (its next request looks it up). */
const REMEMBERED_KEYS = 10_000;

export const keyUnauthorized = (): PalaiError => new PalaiError('unauthorized', 'The API key is unknown or revoked.');

/**
 * A presented key taken for now at the project it was last found under, not
 * yet checked. Whatever first reads or writes for the request checks it (the
 * agent's read at admission folds the check in, `checkRecalledKey` makes it
 * alone) and marks it checked; the hash never leaves this object's methods.
 */
export class RecalledKey {
  readonly #secretHash: string;
  #checked = false;

  readonly #refused: () => void;

  constructor(
    readonly projectId: string,
    readonly keyId: string,
    secretHash: string,
    refused: () => void = () => undefined,
  ) {
    this.#secretHash = secretHash;
    this.#refused = refused;
  }

  get checked(): boolean {
    return this.#checked;
  }

  /** For the statement that checks it: the stored hash to match. */
  hashToCheck(): string {
    return this.#secretHash;
  }

  /** What the statement that checked it found: the id of the live key (null: revoked or gone); unauthorized unless it is this key. */
  settle(liveKeyId: string | null): void {
    this.#checked = true;
    if (liveKeyId === this.keyId) return;
    this.#refused();
    throw keyUnauthorized();
  }
}

/** hash → the key and project it was found under, in the order last found (oldest first). */
export class KeyMemory {
  private readonly keys = new Map<string, { projectId: string; keyId: string }>();

  remember(secret: string, projectId: string, keyId: string): void {
    const hash = hashSecret(secret);
    this.keys.delete(hash);
    this.keys.set(hash, { projectId, keyId });
    if (this.keys.size > REMEMBERED_KEYS) this.keys.delete(this.keys.keys().next().value!);
  }

  /** The key as last found, to be checked; null for a key this process has not authenticated. */
  recall(secret: string): RecalledKey | null {
    const hash = hashSecret(secret);
    const known = this.keys.get(hash);
    // A key found revoked (or gone) is forgotten: its next request looks it up afresh.
    return known ? new RecalledKey(known.projectId, known.keyId, hash, () => this.keys.delete(hash)) : null;
  }
}

/** The SQL expression that is the key's id while it is live in `projectIdSql`'s project, else NULL; `hashParam` holds hashToCheck(). */
export const liveKeySql = (hashParam: string, projectIdSql: string): string =>
  `(SELECT k.id FROM api_keys k WHERE k.secret_hash = ${hashParam} AND k.revoked_at IS NULL AND k.project_id = ${projectIdSql})`;

/** Checks the key alone, in a statement of its own: unauthorized unless it is still live in its project. */
export async function checkRecalledKey(db: Queryable, key: RecalledKey): Promise<void> {
  if (key.checked) return;
  const { rows } = await db.query<{ key_id: string | null }>(`SELECT ${liveKeySql('$1', '$2')} AS key_id`, [key.hashToCheck(), key.projectId]);
  key.settle(rows[0]?.key_id ?? null);
}
