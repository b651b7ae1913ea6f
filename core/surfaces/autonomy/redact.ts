// What the action journal keeps of a call's arguments: never a secret. The
// values of secret-looking keys, at any depth, and every environment value
// (a node command's env) are replaced before anything is stored.
const SECRET_KEY = /authorization|cookie|token|passw|secret|api[-_]?key|apikey|credential|private[-_]?key|session[-_]?id|signature/i;
const ENV_KEY = /^(env|environment|env_vars|envs)$/i;
/** The largest request kept; a bigger one is kept as its size only. */
export const MAX_REQUEST_BYTES = 16 * 1024;
const MAX_DEPTH = 32;
export const REDACTED = '[redacted]';

function redactValue(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (SECRET_KEY.test(key)) out[key] = REDACTED;
    else if (ENV_KEY.test(key)) out[key] = redactEnv(inner);
    else out[key] = redactValue(inner, depth + 1);
  }
  return out;
}

/** An environment's names stay (they say what was asked for); its values never do. */
function redactEnv(env: unknown): unknown {
  if (Array.isArray(env)) return env.map((name) => (typeof name === 'string' && !name.includes('=') ? name : REDACTED));
  if (env !== null && typeof env === 'object') return Object.fromEntries(Object.keys(env).map((name) => [name, REDACTED]));
  return REDACTED;
}

/** The call's arguments as the journal keeps them. */
export function redactedRequest(argumentsJson: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(argumentsJson);
  } catch {
    // Not JSON: nothing in it can be told apart from a secret.
    return { unparsed: true, bytes: Buffer.byteLength(argumentsJson, 'utf8') };
  }
  const redacted = redactValue(parsed, 0);
  const bytes = Buffer.byteLength(JSON.stringify(redacted), 'utf8');
  return bytes > MAX_REQUEST_BYTES ? { truncated: true, bytes } : redacted;
}
