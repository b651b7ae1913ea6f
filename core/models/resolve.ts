// Resolving an agent's model block to a provider, a model id and credentials:
// from a named connection, or from the block itself with the key taken from the
// provider's usual environment variable.
import type { ModelProvider, ModelSpec } from '../../generated/schemas.js';
import { PalaiError } from '../errors/palai-error.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { Queryable } from '../store/db.js';
import { requireConnection } from './connections.js';
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

export async function resolveModel(db: Queryable, box: SecretBox | null, projectId: string, spec: ModelSpec, env: Env = process.env): Promise<ResolvedModel> {
  if (spec.connection) {
    const connection = await requireConnection(db, projectId, spec.connection).catch(() => {
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
