// Where a key from the server's environment may be sent. Each such key is bound
// to the one base URL the operator configured for it: OPENAI_API_KEY to
// OPENAI_BASE_URL, ANTHROPIC_API_KEY to ANTHROPIC_BASE_URL, any other variable to
// the URL its PALAI_KEY_ENV_ALLOWLIST entry names. Without the binding, anyone
// allowed to create an agent could point its base_url at their own server and
// be sent the server's key. A key a caller stored is theirs to send anywhere.
import type { ModelProvider } from '../../generated/schemas.js';
import { DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_OPENAI_BASE_URL, type PalaiConfig } from '../config.js';

/** The environment variable each provider's own key is read from. */
export const PROVIDER_KEY_ENV: Record<ModelProvider, string | null> = {
  fake: null,
  openai: 'OPENAI_API_KEY',
  'openai-chat': 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
};

/** What the operator configured: where each provider is, and which variables may go where. */
export type KeyPolicy = Pick<PalaiConfig, 'keyEnvAllowlist' | 'openaiBaseUrl' | 'anthropicBaseUrl'>;

/** The provider's base URL as the operator configured it; null for the fake model, which calls nothing. */
export function providerBaseUrl(provider: ModelProvider, policy: KeyPolicy): string | null {
  switch (provider) {
    case 'openai':
    case 'openai-chat':
      return policy.openaiBaseUrl;
    case 'anthropic':
      return policy.anthropicBaseUrl;
    case 'fake':
      return null;
    default: {
      const unknown: never = provider;
      throw new Error(`unknown provider ${String(unknown)}`);
    }
  }
}

/** The provider's own public API, which refuses every call without a key; null for the fake model. */
const PROVIDER_API: Record<ModelProvider, string | null> = {
  fake: null,
  openai: DEFAULT_OPENAI_BASE_URL,
  'openai-chat': DEFAULT_OPENAI_BASE_URL,
  anthropic: DEFAULT_ANTHROPIC_BASE_URL,
};

/** Whether `baseUrl` is the provider's own API (a server of the operator's may need no key; that one always does). */
export function isProviderApi(provider: ModelProvider, baseUrl: string): boolean {
  const api = PROVIDER_API[provider];
  return api !== null && sameBaseUrl(provider, baseUrl, api);
}

/**
 * A base URL as the provider's SDK will use it: scheme, host, port, path without
 * a trailing slash (and without `/v1` for Anthropic, whose SDK adds it itself).
 */
function normalized(provider: ModelProvider, raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  let path = url.pathname.replace(/\/+$/, '');
  if (provider === 'anthropic') path = path.replace(/\/v1$/, '');
  url.pathname = path;
  url.hash = '';
  return url.href.replace(/\/$/, '');
}

/** Whether two base URLs reach the same endpoint for this provider. */
export function sameBaseUrl(provider: ModelProvider, a: string, b: string): boolean {
  const left = normalized(provider, a);
  return left !== null && left === normalized(provider, b);
}

/** A URL fit for a message: without any user name or password it carries. */
export function shownUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    // The parser adds a '/' to a bare origin; shown as the operator wrote it.
    return raw.endsWith('/') ? url.href : url.href.replace(/\/$/, '');
  } catch {
    return JSON.stringify(raw.slice(0, 200));
  }
}
