// Resolving an agent's model block to a provider, a model id and credentials:
// from a named connection, or from the block itself. A key the caller stored
// goes to the caller's base URL; a key from the server's environment goes only
// to the base URL it is bound to (key-binding.ts), and never anywhere else.
// Both come from the secret store: nothing here reads the process environment.
import type { ModelProvider, ModelSpec } from '../../generated/schemas.js';
import { loadConfig } from '../config.js';
import { PalaiError } from '../errors/palai-error.js';
import { SecretUnavailableError, type SecretFailure, type SecretStore } from '../secrets/secret-port.js';
import type { Queryable } from '../store/db.js';
import { findConnection, type ConnectionRow } from './connections.js';
import { isProviderApi, PROVIDER_KEY_ENV, providerBaseUrl, sameBaseUrl, shownUrl, type KeyPolicy } from './key-binding.js';
import type { ModelCredentials } from './model-port.js';

export { PROVIDER_KEY_ENV, type KeyPolicy };

/** What resolving a model needs from the process: its secret store (stored and server keys) and the operator's key policy. */
export interface ModelAccess {
  secrets: SecretStore;
  policy: KeyPolicy;
}

export interface ResolvedModel {
  provider: ModelProvider;
  modelName: string | null;
  credentials: ModelCredentials;
}

let defaults: KeyPolicy | null = null;
/** The operator policy of an unconfigured server (provider defaults, the two provider variables). */
const defaultPolicy = (): KeyPolicy => (defaults ??= loadConfig({}));

/** The provider, model and credentials a model block resolves to; `read` as for modelConnection. */
export async function resolveModel(
  db: Queryable,
  secrets: SecretStore,
  projectId: string,
  spec: ModelSpec,
  policy: KeyPolicy = defaultPolicy(),
  read?: ConnectionRow | null,
): Promise<ResolvedModel> {
  const resolved = await resolveUnchecked(db, secrets, projectId, spec, policy, read);
  const { baseUrl } = resolved.credentials;
  if (baseUrl !== null && !isHttpUrl(baseUrl))
    throw new PalaiError('invalid-request', `The model's base_url ${shownUrl(baseUrl)} is not an http or https URL.`);
  return resolved;
}

const isHttpUrl = (text: string): boolean => URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol);

/**
 * The connection a model block names (null when it names none), of the provider
 * the block names if it names one. Otherwise a PalaiError naming the field: an
 * agent is refused with it, and a run whose connection was deleted fails with it.
 * `read` is the connection as a statement that read the agent found it (null:
 * none), which is then not read again.
 */
export async function modelConnection(db: Queryable, projectId: string, spec: ModelSpec, read?: ConnectionRow | null): Promise<ConnectionRow | null> {
  if (!spec.connection) return null;
  const connection = read !== undefined ? read : await findConnection(db, projectId, spec.connection);
  if (!connection) {
    throw new PalaiError('invalid-request', `The agent's model connection ${JSON.stringify(spec.connection)} does not exist.`, {
      errors: [{ pointer: '/model/connection', detail: 'names no model connection of this project' }],
    });
  }
  if (spec.provider && spec.provider !== connection.provider) {
    throw new PalaiError('invalid-request', `The agent names provider ${spec.provider}, but connection ${connection.name} is ${connection.provider}.`, {
      errors: [{ pointer: '/model/provider', detail: `is not the provider of connection ${connection.name} (${connection.provider})` }],
    });
  }
  return connection;
}

async function resolveUnchecked(
  db: Queryable,
  secrets: SecretStore,
  projectId: string,
  spec: ModelSpec,
  policy: KeyPolicy,
  read: ConnectionRow | null | undefined,
): Promise<ResolvedModel> {
  const connection = await modelConnection(db, projectId, spec, read);
  if (!connection) {
    const provider = spec.provider!;
    const baseUrl = spec.base_url ?? providerBaseUrl(provider, policy);
    const apiKey = serverKey(provider, baseUrl, secrets, policy);
    if (apiKey === null) refuseWithoutKey(provider, baseUrl, policy, "the agent's model names no connection with a key");
    return { provider, modelName: spec.name ?? null, credentials: { apiKey, baseUrl } };
  }
  const { provider } = connection;
  const modelName = spec.name ?? connection.default_model;
  const chosenUrl = spec.base_url ?? connection.base_url;

  if (connection.api_key_secret_id) {
    const apiKey = await secrets.reveal(db, projectId, connection.api_key_secret_id).catch((error: unknown) => {
      if (!(error instanceof SecretUnavailableError)) throw error;
      throw new PalaiError('invalid-request', storedKeyProblem(connection.name, error.reason));
    });
    return { provider, modelName, credentials: { apiKey, baseUrl: chosenUrl ?? providerBaseUrl(provider, policy) } };
  }

  if (connection.api_key_env) {
    const variable = connection.api_key_env;
    const binding = policy.keyEnvAllowlist.find((b) => b.variable === variable);
    if (!binding) {
      throw new PalaiError('invalid-request', `Connection ${connection.name} reads ${variable}, which PALAI_KEY_ENV_ALLOWLIST no longer allows.`);
    }
    const baseUrl = chosenUrl ?? binding.baseUrl;
    // Checked again at every call: the binding may have changed since the connection was made.
    if (!sameBaseUrl(provider, baseUrl, binding.baseUrl)) {
      throw new PalaiError(
        'invalid-request',
        `Connection ${connection.name} would send the server's key from ${variable} to ${shownUrl(baseUrl)}, but the operator bound ${variable} to ` +
          `${shownUrl(binding.baseUrl)}; the key was not sent. Store a key with the connection (api_key) to call another base URL.`,
      );
    }
    const apiKey = secrets.serverKey(variable) ?? null;
    if (apiKey === null)
      throw new PalaiError('invalid-request', `${variable} is not set, and the agent's connection ${connection.name} reads its key from it.`);
    return { provider, modelName, credentials: { apiKey, baseUrl } };
  }

  const baseUrl = chosenUrl ?? providerBaseUrl(provider, policy);
  const apiKey = serverKey(provider, baseUrl, secrets, policy);
  if (apiKey === null) refuseWithoutKey(provider, baseUrl, policy, `the agent's connection ${connection.name} has no key`);
  return { provider, modelName, credentials: { apiKey, baseUrl } };
}

/**
 * A call without a key to the provider's own API, where the operator left the
 * provider, is refused by the provider: say which key is missing instead of
 * sending it. Anywhere else (a local server, the operator's proxy) it goes without one.
 */
function refuseWithoutKey(provider: ModelProvider, baseUrl: string | null, policy: KeyPolicy, why: string): void {
  const variable = PROVIDER_KEY_ENV[provider];
  const bound = providerBaseUrl(provider, policy);
  if (!variable || !bound || !baseUrl || !sameBaseUrl(provider, baseUrl, bound) || !isProviderApi(provider, bound)) return;
  throw new PalaiError('invalid-request', `${variable} is not set, and ${why}.`);
}

/**
 * Why a run of this model block would fail before calling its model, from this
 * process, or null: the same message the run would fail with (a key that is not
 * set, a stored key that does not decrypt, a binding that refuses the base URL).
 */
export async function modelProblem(db: Queryable, access: ModelAccess, projectId: string, spec: ModelSpec): Promise<string | null> {
  try {
    await resolveModel(db, access.secrets, projectId, spec, access.policy);
    return null;
  } catch (error) {
    if (!(error instanceof PalaiError)) throw error;
    return error.message;
  }
}

/** The provider's key from the environment, when the call goes where the operator bound it; else none. */
function serverKey(provider: ModelProvider, baseUrl: string | null, secrets: SecretStore, policy: KeyPolicy): string | null {
  const variable = PROVIDER_KEY_ENV[provider];
  const bound = providerBaseUrl(provider, policy);
  if (!variable || !bound || !baseUrl || !sameBaseUrl(provider, baseUrl, bound)) return null;
  return secrets.serverKey(variable) ?? null;
}

/** What a stored key that cannot be revealed means for its connection, without the key. */
function storedKeyProblem(name: string, reason: SecretFailure): string {
  switch (reason) {
    case 'no-secret-key':
      return `Connection ${name} has a stored key, but PALAI_SECRET_KEY is not set on this server.`;
    case 'undecryptable':
      return `The stored key of connection ${name} cannot be decrypted with this PALAI_SECRET_KEY.`;
    case 'missing':
      return `The stored key of connection ${name} is missing from the secret store.`;
    default: {
      const unknown: never = reason;
      throw new Error(`unknown secret failure ${String(unknown)}`);
    }
  }
}

/**
 * Whether a connection can authenticate from this process, and why (for `palai doctor`).
 * A stored key is revealed (and dropped) to prove it decrypts here. With `policy`
 * (the doctor passes the configuration), whether the operator's key bindings let
 * the key go to the connection's base URL is checked too.
 */
export async function connectionReadiness(
  db: Queryable,
  secrets: SecretStore,
  connection: ConnectionRow,
  policy: KeyPolicy | null = null,
): Promise<{ usable: boolean; detail: string }> {
  if (connection.api_key_secret_id) {
    try {
      await secrets.reveal(db, connection.project_id, connection.api_key_secret_id);
      return { usable: true, detail: `stored key …${connection.api_key_last4}` };
    } catch (error) {
      if (!(error instanceof SecretUnavailableError)) throw error;
      return { usable: false, detail: READINESS_DETAIL[error.reason] };
    }
  }
  if (connection.api_key_env && policy) {
    const binding = policy.keyEnvAllowlist.find((b) => b.variable === connection.api_key_env);
    if (!binding) return { usable: false, detail: `reads ${connection.api_key_env}, which PALAI_KEY_ENV_ALLOWLIST does not allow` };
    if (connection.base_url && !sameBaseUrl(connection.provider, connection.base_url, binding.baseUrl)) {
      return {
        usable: false,
        detail: `its key from ${binding.variable} may go only to ${shownUrl(binding.baseUrl)}, not to its base_url ${shownUrl(connection.base_url)}`,
      };
    }
  }
  const variable = connection.api_key_env ?? PROVIDER_KEY_ENV[connection.provider];
  if (!variable) return { usable: true, detail: 'needs no key' };
  if (!connection.api_key_env && policy && connection.base_url) {
    const bound = providerBaseUrl(connection.provider, policy);
    if (bound && !sameBaseUrl(connection.provider, connection.base_url, bound)) {
      return { usable: true, detail: `no key (${variable} goes only to ${shownUrl(bound)}); fine if ${shownUrl(connection.base_url)} needs none` };
    }
  }
  if (secrets.serverKey(variable)) return { usable: true, detail: `key from ${variable}` };
  // OpenAI-compatible servers on a private network often take no key at all.
  if (connection.base_url) return { usable: true, detail: `no key (${variable} is unset); fine if ${shownUrl(connection.base_url)} needs none` };
  return { usable: false, detail: `${variable} is not set` };
}

const READINESS_DETAIL: Record<SecretFailure, string> = {
  'no-secret-key': 'has a stored key, but PALAI_SECRET_KEY is not set',
  undecryptable: 'its stored key does not decrypt with this PALAI_SECRET_KEY',
  missing: 'its stored key is missing from the secret store',
};
