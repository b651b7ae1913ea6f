// The one configuration loader: every setting, its environment variable and its
// default live in this table (docs/configuration.md mirrors it).
import { resolve } from 'node:path';

export interface PalaiConfig {
  /** HTTP port of `palai serve`. Default 8080. */
  port: number;
  /** Address `palai serve` binds. Default 0.0.0.0. */
  host: string;
  /** Directory of the embedded store and other local state. Default ./.palai. */
  home: string;
  /** PostgreSQL URL; when unset the embedded PGlite store under `home` is used. Default unset. */
  databaseUrl: string | null;
  /** Value of the key created on first start with an empty store. Default: a random key. */
  bootstrapApiKey: string | null;
  /** Largest accepted request body in bytes. Default 10 MiB. */
  maxBodyBytes: number;
  /** pino log level. Default info. */
  logLevel: string;
  /** How long a worker's claim on a response lasts without a heartbeat, in seconds. Default 30. */
  leaseSeconds: number;
  /** How often an idle worker looks for work even without a wake-up, in ms. Default 1000. */
  pollIntervalMs: number;
  /** Responses one process runs at once. Default 8. */
  workerConcurrency: number;
  /** Hosts outbound tool calls may reach although they resolve to private or loopback addresses. Default none. */
  egressAllowHosts: string[];
  /** Environment variables a model connection's `api_key_env` may name. Default OPENAI_API_KEY, ANTHROPIC_API_KEY. */
  keyEnvAllowlist: string[];
  /** Encrypts stored provider keys; without it keys can only come from environment variables. Default unset. */
  secretKey: string | null;
  /** Retries of a model call that failed with 429, 5xx, a timeout or a broken stream. Default 4. */
  modelMaxRetries: number;
  /** First retry delay of a failed model call, doubled each attempt (with jitter, capped at 30 s). Default 500. */
  modelRetryBaseMs: number;
  /** Upper bound of one model request, in seconds. Default 120. */
  modelTimeoutSeconds: number;
  /** How long an Idempotency-Key is remembered, in hours. Default 24. */
  idempotencyRetentionHours: number;
  /** Longest a synchronous POST /v1/responses waits before answering with the current state, in seconds. Default 600. */
  syncWaitSeconds: number;
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min = 0, max?: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || (max !== undefined && value > max)) {
    const range = max === undefined ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(`${name} must be an integer ${range}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function text(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw === '' ? null : raw;
}

export class ConfigError extends Error {}

export function loadConfig(env: Env = process.env): PalaiConfig {
  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: text(env, 'PALAI_HOST') ?? '0.0.0.0',
    home: resolve(text(env, 'PALAI_HOME') ?? './.palai'),
    databaseUrl: text(env, 'PALAI_DATABASE_URL'),
    bootstrapApiKey: text(env, 'PALAI_BOOTSTRAP_API_KEY'),
    maxBodyBytes: int(env, 'PALAI_MAX_BODY_BYTES', 10 * 1024 * 1024, 1),
    logLevel: text(env, 'PALAI_LOG_LEVEL') ?? 'info',
    leaseSeconds: int(env, 'PALAI_LEASE_SECONDS', 30, 1),
    pollIntervalMs: int(env, 'PALAI_POLL_INTERVAL_MS', 1000, 10),
    workerConcurrency: int(env, 'PALAI_WORKER_CONCURRENCY', 8, 1),
    syncWaitSeconds: int(env, 'PALAI_SYNC_WAIT_SECONDS', 600, 1),
    egressAllowHosts: (text(env, 'PALAI_EGRESS_ALLOW_HOSTS') ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    secretKey: text(env, 'PALAI_SECRET_KEY'),
    keyEnvAllowlist: (text(env, 'PALAI_KEY_ENV_ALLOWLIST') ?? 'OPENAI_API_KEY,ANTHROPIC_API_KEY').split(',').map((h) => h.trim()).filter(Boolean),
    modelMaxRetries: int(env, 'PALAI_MODEL_MAX_RETRIES', 4, 0, 20),
    modelRetryBaseMs: int(env, 'PALAI_MODEL_RETRY_BASE_MS', 500, 1),
    modelTimeoutSeconds: int(env, 'PALAI_MODEL_TIMEOUT_SECONDS', 120, 1),
    idempotencyRetentionHours: int(env, 'PALAI_IDEMPOTENCY_RETENTION_HOURS', 24, 1),
  };
}
