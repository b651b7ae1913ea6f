// The operator's keys, taken from the environment once, when the server starts.
// Only the variables the operator allow-listed are kept: a connection naming any
// other variable (PALAI_DATABASE_URL, HOME, …) finds nothing, whatever the
// environment holds, and nothing later in the process's life reads it again.
import type { KeyBinding } from '../config.js';
import { PROVIDER_KEY_ENV } from '../models/key-binding.js';

/** The variables a server key may come from: each provider's own, and each PALAI_KEY_ENV_ALLOWLIST entry. */
export function serverKeyNames(keyEnvAllowlist: readonly KeyBinding[]): string[] {
  const providerVariables = Object.values(PROVIDER_KEY_ENV).filter((name): name is string => name !== null);
  return [...new Set([...providerVariables, ...keyEnvAllowlist.map((binding) => binding.variable)])];
}

/** A copy of the allow-listed variables that are set (an empty value counts as unset). */
export function captureServerKeys(env: Readonly<Record<string, string | undefined>>, names: readonly string[]): ReadonlyMap<string, string> {
  const keys = new Map<string, string>();
  for (const name of names) {
    const value = env[name];
    if (value) keys.set(name, value);
  }
  return keys;
}
