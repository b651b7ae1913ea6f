// The one configuration loader: every setting, its environment variable and its
// default live in this table (docs/configuration.md mirrors it).
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import ipaddr from 'ipaddr.js';

export interface PalaiConfig {
  /** HTTP port of `palai serve`. Default 8080. */
  port: number;
  /** Address `palai serve` binds (HOST). Default 127.0.0.1: nothing is reachable from the network until an operator says so. */
  host: string;
  /** Operator port for /metrics, /healthz and /readyz (PALAI_ADMIN_PORT). Default null: they are served on `port`. */
  adminPort: number | null;
  /** How long a stopping process lets running responses and requests finish before handing leases back, in seconds. Default 20. */
  shutdownGraceSeconds: number;
  /** Directory of the embedded store and other local state. Default ./.palai. */
  home: string;
  /** PostgreSQL URL; when unset the embedded PGlite store under `home` is used. Default unset. */
  databaseUrl: string | null;
  /**
   * Name (prepare) the statements Palai sends most, so PostgreSQL plans each
   * once per connection instead of at every call. Off for a pooler that cannot
   * carry them (PgBouncer in transaction mode before 1.21). Default true.
   */
  databasePreparedStatements: boolean;
  /** Value of the key created on first start with an empty store. Default: a random key. */
  bootstrapApiKey: string | null;
  /** Largest accepted request body in bytes. Default 10 MiB. */
  maxBodyBytes: number;
  /** pino log level, one of LOG_LEVELS. Default info. */
  logLevel: string;
  /** How long a worker's claim on a response lasts without a heartbeat, in seconds. Default 30. */
  leaseSeconds: number;
  /** How often an idle worker looks for work even without a wake-up, in ms. Default 1000. */
  pollIntervalMs: number;
  /** Responses one process runs at once. Default 32. */
  workerConcurrency: number;
  /** Hosts every outbound call (model base URLs, tools) may reach without the egress address check, matched as written in the URL. Default none. */
  egressAllowHosts: string[];
  /** The JSON or YAML file declaring the operator's stdio MCP servers (PALAI_MCP_STDIO_SERVERS_FILE), read by the MCP wing at start. Default none. */
  mcpStdioServersFile: string | null;
  /**
   * Environment variables a model connection's `api_key_env` may name, each bound
   * to the one base URL its key may be sent to (PALAI_KEY_ENV_ALLOWLIST: the
   * provider variables bare, bound by OPENAI_BASE_URL / ANTHROPIC_BASE_URL; any
   * other as NAME=https://host/v1). Default OPENAI_API_KEY, ANTHROPIC_API_KEY.
   */
  keyEnvAllowlist: KeyBinding[];
  /** Where `openai` and `openai-chat` models go without a base_url, and the only base URL OPENAI_API_KEY is sent to (OPENAI_BASE_URL). Default https://api.openai.com/v1. */
  openaiBaseUrl: string;
  /** Where `anthropic` models go without a base_url, and the only base URL ANTHROPIC_API_KEY is sent to (ANTHROPIC_BASE_URL). Default https://api.anthropic.com. */
  anthropicBaseUrl: string;
  /** Encrypts stored provider keys; without it keys can only come from environment variables. Default unset. */
  secretKey: string | null;
  /** Serve the web console at /console on the API port (PALAI_CONSOLE). Default true. */
  console: boolean;
  /** Compact a finished response's journal to its terminal event this long after its creation (PALAI_RETENTION_COMPACT_AFTER), in ms; null: never. Default 7 days. */
  retentionCompactAfterMs: number | null;
  /** Delete a finished response and its rows this long after its creation (PALAI_RETENTION_DELETE_AFTER), in ms; null: never. Default off. */
  retentionDeleteAfterMs: number | null;
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
  // ---- webhooks ----
  /** Longest one webhook delivery attempt may take, in seconds (PALAI_WEBHOOK_TIMEOUT_SECONDS). Default 15. */
  webhookTimeoutSeconds: number;
  /**
   * Delays before each retry of a failed webhook delivery, in ms, before jitter (PALAI_WEBHOOK_RETRY_SCHEDULE,
   * e.g. `5s,30s,2m,1h`); a delivery is dead once the schedule runs out. Default 5s,30s,2m,10m,30m,1h,2h,4h,6h,8h,10h,12h,12h,15h (about 3 days).
   */
  webhookRetryScheduleMs: number[];
  /** An endpoint whose deliveries have failed, with no success since, for longer than this is disabled, in seconds (PALAI_WEBHOOK_DISABLE_AFTER_SECONDS). Default 432000 (5 days). */
  webhookDisableAfterSeconds: number;
  /** Attempts to one endpoint running at once, across the processes sharing the store (PALAI_WEBHOOK_CONCURRENCY). Default 4. */
  webhookConcurrency: number;
  /** Responses admitted and not yet started above which queue consumers stop taking jobs; 0: never. */
  queueMaxBacklog: number;
  /** The shortest interval a schedule may have (PALAI_MIN_SCHEDULE_SECONDS). */
  minScheduleSeconds: number;
  /** How often the scheduler looks for due triggers (a NOTIFY wakes it sooner). */
  schedulerIntervalMs: number;
  /** How late an occurrence may be taken and still be on time; older ones are missed runs. */
  scheduleGraceSeconds: number;
  /** How long the hub keeps an ended node invocation (PALAI_NODE_LEDGER_RETENTION_HOURS); open ones are kept for good. */
  nodeLedgerRetentionHours: number;
}

/** A server-side key's environment variable and the base URL it may be sent to. */
export interface KeyBinding {
  variable: string;
  baseUrl: string;
}

type Env = Record<string, string | undefined>;

/** pino's levels, most severe first, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The longest delay a Node.js timer holds (2^31 - 1 ms, about 24.8 days); a longer one fires at once. */
const TIMER_MAX_MS = 2_147_483_647;
const TIMER_MAX_SECONDS = Math.floor(TIMER_MAX_MS / 1000);

/** Digits only: `1e3`, `0x10` or `1.0` are not what an operator means by a count. */
function int(env: Env, name: string, fallback: number, min = 0, max?: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min || (max !== undefined && value > max)) {
    const range = max === undefined ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(`${name} must be an integer ${range}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'on', 'yes'].includes(raw)) return true;
  if (['0', 'false', 'off', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(env[name])}`);
}

function text(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw === '' ? null : raw;
}

export class ConfigError extends Error {}

function oneOf<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === null) return fallback;
  const chosen = choices.find((choice) => choice === raw.trim().toLowerCase());
  if (chosen === undefined) throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got ${JSON.stringify(raw)}`);
  return chosen;
}

/** A comma-separated list, entries trimmed, empty ones dropped. */
const list = (raw: string): string[] =>
  raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);

/** A name as DNS and /etc/hosts take it: dot-separated labels of letters, digits, `-` and `_`. */
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

const isHost = (value: string): boolean => isIP(value) !== 0 || HOST_NAME.test(value);

/** HOST, else PALAI_HOST: an address or a name to bind, without brackets or a port (the port is PORT). */
function bindHost(env: Env): string {
  const name = text(env, 'HOST') !== null ? 'HOST' : 'PALAI_HOST';
  const raw = text(env, name);
  if (raw === null) return '127.0.0.1';
  if (!isHost(raw)) throw new ConfigError(`${name} must be an IP address or a host name (the port is PORT), got ${JSON.stringify(raw)}`);
  return raw;
}

/** PALAI_EGRESS_ALLOW_HOSTS: host names and IP literals as URLs write them, and CIDR blocks. */
function egressAllowHosts(env: Env): string[] {
  const entries = list(text(env, 'PALAI_EGRESS_ALLOW_HOSTS') ?? '');
  for (const entry of entries) {
    const valid = entry.includes('/') ? isCidr(entry) : isHost(entry.replace(/^\[(.*)\]$/, '$1'));
    if (!valid) {
      throw new ConfigError(`PALAI_EGRESS_ALLOW_HOSTS entry ${JSON.stringify(entry)} must be a host name, an IP address or a CIDR block such as 10.1.0.0/16`);
    }
  }
  return entries;
}

function isCidr(entry: string): boolean {
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

/** PALAI_DATABASE_URL, whose value is never echoed: it carries the database password. */
function databaseUrl(env: Env): string | null {
  const raw = text(env, 'PALAI_DATABASE_URL');
  if (raw === null) return null;
  const protocol = URL.canParse(raw) ? new URL(raw).protocol : null;
  if (protocol === 'postgres:' || protocol === 'postgresql:') return raw;
  const got = protocol === null ? 'a value that is not a URL' : `a ${protocol} URL`;
  throw new ConfigError(`PALAI_DATABASE_URL must be a postgres:// or postgresql:// URL (postgres://user:password@host:5432/database), got ${got}`);
}

function httpUrl(raw: string, what: string): string {
  let protocol: string | null = null;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    protocol = null;
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new ConfigError(`${what} must be an http or https URL, got ${JSON.stringify(raw)}`);
  return raw;
}

/**
 * PALAI_KEY_ENV_ALLOWLIST: the provider variables bare (their base URLs are
 * OPENAI_BASE_URL and ANTHROPIC_BASE_URL), any other as NAME=URL, since a key an
 * API caller could send to a URL of its choosing is a key given away.
 */
function keyEnvAllowlist(env: Env, providerBaseUrls: ReadonlyMap<string, string>): KeyBinding[] {
  const entries = list(text(env, 'PALAI_KEY_ENV_ALLOWLIST') ?? 'OPENAI_API_KEY,ANTHROPIC_API_KEY');
  const bindings: KeyBinding[] = [];
  for (const entry of entries) {
    const equals = entry.indexOf('=');
    const variable = equals < 0 ? entry : entry.slice(0, equals).trim();
    const url = equals < 0 ? null : entry.slice(equals + 1).trim();
    const where = `PALAI_KEY_ENV_ALLOWLIST entry ${JSON.stringify(entry)}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) throw new ConfigError(`${where}: ${JSON.stringify(variable)} is not an environment variable name`);
    if (bindings.some((b) => b.variable === variable)) throw new ConfigError(`${where}: ${variable} is listed twice`);
    const providerUrl = providerBaseUrls.get(variable);
    if (providerUrl !== undefined) {
      if (url !== null) throw new ConfigError(`${where}: list ${variable} without a URL; its base URL is set by ${variable.replace(/_API_KEY$/, '_BASE_URL')}`);
      bindings.push({ variable, baseUrl: providerUrl });
      continue;
    }
    if (url === null) throw new ConfigError(`${where}: say where ${variable}'s key may be sent, as ${variable}=https://host/v1`);
    bindings.push({ variable, baseUrl: httpUrl(url, `${where}: the URL`) });
  }
  return bindings;
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A comma-separated list of durations (`500ms`, `5s`, `2m`, `1h`, `1d`), in ms. */
/** One duration such as 7d or 12h, in ms, or null for `off`. */
function optionalDuration(env: Env, name: string, fallback: string): number | null {
  const raw = (text(env, name) ?? fallback).trim();
  if (raw.toLowerCase() === 'off') return null;
  const match = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/.exec(raw);
  const ms = match ? Math.round(Number(match[1]) * DURATION_UNITS_MS[match[2]]) : 0;
  if (!match || ms < 1000) throw new ConfigError(`${name} must be a duration of at least 1s such as 7d or 12h, or off, got ${JSON.stringify(raw)}`);
  return ms;
}

function durations(env: Env, name: string, fallback: string): number[] {
  const raw = text(env, name) ?? fallback;
  return raw.split(',').map((entry) => {
    const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(entry);
    if (!match) throw new ConfigError(`${name} must list durations such as 5s,2m,1h, got ${JSON.stringify(entry.trim())}`);
    return Math.round(Number(match[1]) * DURATION_UNITS_MS[match[2]]);
  });
}

/** The default webhook retry schedule: seconds, then minutes, then hours, about 3 days in all. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = '5s,30s,2m,10m,30m,1h,2h,4h,6h,8h,10h,12h,12h,15h';

/** The providers' own APIs: where their models go unless OPENAI_BASE_URL / ANTHROPIC_BASE_URL say otherwise. */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

export function loadConfig(env: Env = process.env): PalaiConfig {
  const openaiBaseUrl = httpUrl(text(env, 'OPENAI_BASE_URL') ?? DEFAULT_OPENAI_BASE_URL, 'OPENAI_BASE_URL');
  const anthropicBaseUrl = httpUrl(text(env, 'ANTHROPIC_BASE_URL') ?? DEFAULT_ANTHROPIC_BASE_URL, 'ANTHROPIC_BASE_URL');
  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: bindHost(env),
    adminPort: text(env, 'PALAI_ADMIN_PORT') === null ? null : int(env, 'PALAI_ADMIN_PORT', 0, 0, 65535),
    shutdownGraceSeconds: int(env, 'PALAI_SHUTDOWN_GRACE_SECONDS', 20, 0, 3600),
    home: resolve(text(env, 'PALAI_HOME') ?? './.palai'),
    databaseUrl: databaseUrl(env),
    databasePreparedStatements: bool(env, 'PALAI_DATABASE_PREPARED_STATEMENTS', true),
    bootstrapApiKey: text(env, 'PALAI_BOOTSTRAP_API_KEY'),
    maxBodyBytes: int(env, 'PALAI_MAX_BODY_BYTES', 10 * 1024 * 1024, 1),
    logLevel: oneOf(env, 'PALAI_LOG_LEVEL', LOG_LEVELS, 'info'),
    leaseSeconds: int(env, 'PALAI_LEASE_SECONDS', 30, 1),
    pollIntervalMs: int(env, 'PALAI_POLL_INTERVAL_MS', 1000, 10, TIMER_MAX_MS),
    workerConcurrency: int(env, 'PALAI_WORKER_CONCURRENCY', 32, 1),
    syncWaitSeconds: int(env, 'PALAI_SYNC_WAIT_SECONDS', 600, 1, TIMER_MAX_SECONDS),
    egressAllowHosts: egressAllowHosts(env),
    mcpStdioServersFile: text(env, 'PALAI_MCP_STDIO_SERVERS_FILE'),
    secretKey: text(env, 'PALAI_SECRET_KEY'),
    console: bool(env, 'PALAI_CONSOLE', true),
    retentionCompactAfterMs: optionalDuration(env, 'PALAI_RETENTION_COMPACT_AFTER', '7d'),
    retentionDeleteAfterMs: optionalDuration(env, 'PALAI_RETENTION_DELETE_AFTER', 'off'),
    keyEnvAllowlist: keyEnvAllowlist(
      env,
      new Map([
        ['OPENAI_API_KEY', openaiBaseUrl],
        ['ANTHROPIC_API_KEY', anthropicBaseUrl],
      ]),
    ),
    openaiBaseUrl,
    anthropicBaseUrl,
    modelMaxRetries: int(env, 'PALAI_MODEL_MAX_RETRIES', 4, 0, 20),
    modelRetryBaseMs: int(env, 'PALAI_MODEL_RETRY_BASE_MS', 500, 1),
    modelTimeoutSeconds: int(env, 'PALAI_MODEL_TIMEOUT_SECONDS', 120, 1, TIMER_MAX_SECONDS),
    idempotencyRetentionHours: int(env, 'PALAI_IDEMPOTENCY_RETENTION_HOURS', 24, 1),
    webhookTimeoutSeconds: int(env, 'PALAI_WEBHOOK_TIMEOUT_SECONDS', 15, 1, 50),
    webhookRetryScheduleMs: durations(env, 'PALAI_WEBHOOK_RETRY_SCHEDULE', DEFAULT_WEBHOOK_RETRY_SCHEDULE),
    webhookDisableAfterSeconds: int(env, 'PALAI_WEBHOOK_DISABLE_AFTER_SECONDS', 5 * 24 * 3600, 1),
    webhookConcurrency: int(env, 'PALAI_WEBHOOK_CONCURRENCY', 4, 1, 1000),
    queueMaxBacklog: int(env, 'PALAI_QUEUE_MAX_BACKLOG', 1000, 0, 10_000_000),
    minScheduleSeconds: int(env, 'PALAI_MIN_SCHEDULE_SECONDS', 60, 1, 31_536_000),
    schedulerIntervalMs: int(env, 'PALAI_SCHEDULER_INTERVAL_MS', 1000, 50, 60_000),
    scheduleGraceSeconds: int(env, 'PALAI_SCHEDULE_GRACE_SECONDS', 10, 0, 86_400),
    nodeLedgerRetentionHours: int(env, 'PALAI_NODE_LEDGER_RETENTION_HOURS', 7 * 24, 1, 24 * 3660),
  };
}
