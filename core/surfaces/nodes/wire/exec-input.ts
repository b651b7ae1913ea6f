// The byte limits of an exec command's input, which a JSON Schema cannot say
// (maxLength counts code points, the limits are UTF-8 bytes): the hub checks
// them before it prepares a plan, the node again before it runs one.
import { MAX_ENV_BYTES, MAX_INPUT_BYTES, MAX_SCRIPT_BYTES } from './limits.js';
import { canonicalJson } from './canonical-hash.js';

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Why the input is over a limit, or null. Shape errors are the command schema's to find. */
export function execInputFault(input: Record<string, unknown>): string | null {
  if (bytes(canonicalJson(input)) > MAX_INPUT_BYTES) return `the input is over ${MAX_INPUT_BYTES} bytes`;
  if (typeof input.script === 'string' && bytes(input.script) > MAX_SCRIPT_BYTES) return `the script is over ${MAX_SCRIPT_BYTES} bytes in UTF-8`;
  const env = input.env;
  if (env && typeof env === 'object') {
    const envBytes = Object.entries(env).reduce((sum, [name, value]) => sum + bytes(name) + 1 + bytes(String(value)), 0);
    if (envBytes > MAX_ENV_BYTES) return `the environment is over ${MAX_ENV_BYTES} bytes`;
  }
  return null;
}
