// Resolving an agent's model block to a provider, a model id and credentials:
// from a named connection, or from the block itself with the key taken from the
// provider's usual environment variable.
import type { ModelProvider, ModelSpec } from '../../generated/schemas.js';
import { assertEgressAllowed } from '../egress.js';
import { PalaiError } from '../errors/palai-error.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { Queryable } from '../store/db.js';
import { requireConnection, type ConnectionRow } from './connections.js';
import type { ModelCredentials } from './model-port.js';

/** The environment variable each provider's key is read from when no connection names one. */
export const PROVIDER_KEY_ENV: Record<ModelProvider, string | null> = {
  fake: null,
  openai: 'OPENAI_API_KEY',
  'openai-chat': 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
};

export interface ResolvedModel {
  provider: ModelProvider;
  modelName: string | null;
  credentials: ModelCredentials;
}

type Env = Record<string, string | undefined>;

/** What the operator allows: variables connections may read keys from, and private hosts models may be reached at. */
export interface ModelPolicy {
  keyEnvAllowlist: readonly string[];
  egressAllowHosts: readonly string[];
}

const OPEN_POLICY: ModelPolicy = { keyEnvAllowlist: Object.values(PROVIDER_KEY_ENV).filter((v): v is string => v !== null), egressAllowHosts: [] };

export async function resolveModel(
  db: Queryable,
  box: SecretBox | null,
  projectId: string,
  spec: ModelSpec,
  env: Env = process.env,
  policy: ModelPolicy = OPEN_POLICY,
): Promise<ResolvedModel> {
  const resolved = await resolveUnchecked(db, box, projectId, spec, env, policy);
  // A base URL an operator did not allow may not point into the private network.
  if (resolved.credentials.baseUrl) await assertEgressAllowed(resolved.credentials.baseUrl, policy.egressAllowHosts);
  return resolved;
}

async function resolveUnchecked(db: Queryable, box: SecretBox | null, projectId: string, spec: ModelSpec, env: Env, policy: ModelPolicy): Promise<ResolvedModel> {
  if (spec.connection) {
    const connection = await requireConnection(db, projectId, spec.connection).catch((error: unknown) => {
      // Only a missing connection means that; a store failure must not end the run as if it did.
      if (!(error instanceof PalaiError)) throw error;
      throw new PalaiError('invalid-request', `The agent's model connection ${JSON.stringify(spec.connection)} does not exist.`);
    });
    if (spec.provider && spec.provider !== connection.provider) {
      throw new PalaiError('invalid-request', `The agent names provider ${spec.provider}, but connection ${connection.name} is ${connection.provider}.`);
    }
    let apiKey: string | null = null;
    if (connection.api_key_encrypted) {
      if (!box) throw new PalaiError('invalid-request', `Connection ${connection.name} has a stored key, but PALAI_SECRET_KEY is not set on this server.`);
      try {
        apiKey = box.open(connection.api_key_encrypted);
      } catch {
        throw new PalaiError('invalid-request', `The stored key of connection ${connection.name} cannot be decrypted with this PALAI_SECRET_KEY.`);
      }
    } else if (connection.api_key_env) {
      if (!policy.keyEnvAllowlist.includes(connection.api_key_env)) {
        throw new PalaiError('invalid-request', `Connection ${connection.name} reads ${connection.api_key_env}, which PALAI_KEY_ENV_ALLOWLIST no longer allows.`);
      }
      apiKey = env[connection.api_key_env] || null;
    } else {
      apiKey = envKey(connection.provider, env);
    }
    return {
      provider: connection.provider,
      modelName: spec.name ?? connection.default_model,
      credentials: { apiKey, baseUrl: spec.base_url ?? connection.base_url },
    };
  }
  const provider = spec.provider!;
  return { provider, modelName: spec.name ?? null, credentials: { apiKey: envKey(provider, env), baseUrl: spec.base_url ?? null } };
}

function envKey(provider: ModelProvider, env: Env): string | null {
  const name = PROVIDER_KEY_ENV[provider];
  return name ? env[name] || null : null;
}

/** Whether a connection can authenticate from this process, and why (for `palai doctor`). */
export function connectionReadiness(connection: ConnectionRow, box: SecretBox | null, env: Env = process.env): { usable: boolean; detail: string } {
  if (connection.api_key_encrypted) {
    if (!box) return { usable: false, detail: 'has a stored key, but PALAI_SECRET_KEY is not set' };
    try {
      box.open(connection.api_key_encrypted);
      return { usable: true, detail: `stored key …${connection.api_key_last4}` };
    } catch {
      return { usable: false, detail: 'its stored key does not decrypt with this PALAI_SECRET_KEY' };
    }
  }
  const variable = connection.api_key_env ?? PROVIDER_KEY_ENV[connection.provider];
  if (!variable) return { usable: true, detail: 'needs no key' };
  if (env[variable]) return { usable: true, detail: `key from ${variable}` };
  // OpenAI-compatible servers on a private network often take no key at all.
  if (connection.base_url) return { usable: true, detail: `no key (${variable} is unset); fine if ${connection.base_url} needs none` };
  return { usable: false, detail: `${variable} is not set` };
}
