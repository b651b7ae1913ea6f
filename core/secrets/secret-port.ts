// The secret port: how a surface keeps a credential it was given (a model key,
// an MCP server's or a remote agent's headers, a webhook signing secret, a bot
// token) without ever holding it in a row of its own. The surface stores the
// plaintext once, keeps the returned reference, and asks for the value back
// only at the moment it sends it. Secrets are write-only to the outside: no
// API answer, log line, event or error carries the value or its ciphertext.
//
// The operator's own keys live in the process environment. The store captures
// the allow-listed ones when the server starts, so nothing inside the kernel
// reads process.env, and a variable nobody allow-listed is never handed out.
//
// Reading order: this file (the contract), secret-box.ts (the cipher),
// secret-store.ts (the table), server-keys.ts (the environment).
import { PalaiError } from '../errors/palai-error.js';
import type { Queryable } from '../store/db.js';

/** What a surface keeps in place of the secret: its id, and its last four characters when long enough to show. */
export interface SecretRef {
  /** `sec_…`, scoped to the project that stored it. */
  id: string;
  /** The last four characters of a secret of 16 or more; null for shorter ones, whose last four would say too much. */
  last4: string | null;
}

/**
 * What a secret is for, recorded with it (`model-key`, `mcp-header`,
 * `remote-agent-header`, `webhook-secret`, `bot-token`). Informational: it
 * says which surface owns a row, and nothing reads a secret by its purpose.
 */
export type SecretPurpose = string;

export interface SecretStore {
  /**
   * Encrypts and stores `plaintext` for the project. Refused (SecretUnavailableError
   * `no-secret-key`, an `invalid-request` naming PALAI_SECRET_KEY) when the server
   * has no secret key. Run it in the transaction that stores the reference.
   */
  put(q: Queryable, projectId: string, purpose: SecretPurpose, plaintext: string): Promise<SecretRef>;
  /**
   * The plaintext, for the one call that sends it. Only the project that stored
   * it can reveal it; otherwise, or when it cannot be decrypted here, a
   * SecretUnavailableError that names the id and never the value.
   */
  reveal(q: Queryable, projectId: string, id: string): Promise<string>;
  /** Stores a new value under the same id (rotation); the references keep working. Not-found when it is not the project's. */
  replace(q: Queryable, projectId: string, id: string, plaintext: string): Promise<SecretRef>;
  /** Deletes the secret; false when the project had none by that id. Run it in the transaction that drops the reference. */
  remove(q: Queryable, projectId: string, id: string): Promise<boolean>;
  /**
   * The value of an operator-allow-listed environment variable as it was when
   * the server started (OPENAI_API_KEY, ANTHROPIC_API_KEY and the
   * PALAI_KEY_ENV_ALLOWLIST variables); undefined when unset, empty, or not allow-listed.
   */
  serverKey(name: string): string | undefined;
}

/** Why a secret could not be stored or revealed. */
export type SecretFailure =
  /** No secret with that id in the project (or none at all). */
  | 'missing'
  /** The server runs without PALAI_SECRET_KEY, so nothing can be sealed or opened. */
  | 'no-secret-key'
  /** Sealed under another PALAI_SECRET_KEY, or damaged. */
  | 'undecryptable';

/**
 * A PalaiError whose `reason` callers can branch on to say what it means for
 * them ("connection X has a stored key, but…"). Its message names the secret's
 * id at most: never its value, never its ciphertext.
 */
export class SecretUnavailableError extends PalaiError {
  constructor(
    readonly reason: SecretFailure,
    detail: string,
  ) {
    super(reason === 'missing' ? 'not-found' : 'invalid-request', detail);
    this.name = 'SecretUnavailableError';
  }
}
