// Server keys are bound to base URLs: the configuration that says where each key
// may go, and the resolution of an agent's model block that sends a key from the
// environment only there. A caller-chosen URL gets no server key.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../core/config.js';
import { sameBaseUrl } from '../../core/models/key-binding.js';
import { resolveModel } from '../../core/models/resolve.js';
import { createSecretStore } from '../../core/secrets/secret-store.js';
import type { Queryable } from '../../core/store/db.js';
import type { ModelSpec } from '../../generated/schemas.js';

const ENV = { OPENAI_API_KEY: 'sk-server-openai-0123456789', ANTHROPIC_API_KEY: 'sk-ant-server-0123456789' };
/** No connection is named, so the store is never asked. */
const NO_STORE = { query: () => Promise.reject(new Error('the store was used')) } as unknown as Queryable;

function configError(env: Record<string, string>, pattern: RegExp): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.match((error as Error).message, pattern);
      return true;
    },
  );
}

test('by default each provider key is bound to its provider, and only those two variables are allowed', () => {
  const config = loadConfig({});
  assert.equal(config.openaiBaseUrl, 'https://api.openai.com/v1');
  assert.equal(config.anthropicBaseUrl, 'https://api.anthropic.com');
  assert.deepEqual(config.keyEnvAllowlist, [
    { variable: 'OPENAI_API_KEY', baseUrl: 'https://api.openai.com/v1' },
    { variable: 'ANTHROPIC_API_KEY', baseUrl: 'https://api.anthropic.com' },
  ]);
});

test('OPENAI_BASE_URL and ANTHROPIC_BASE_URL move the provider and the binding of its key together', () => {
  const config = loadConfig({ OPENAI_BASE_URL: 'http://10.0.0.5:8000/v1', ANTHROPIC_BASE_URL: 'https://proxy.example/anthropic' });
  assert.equal(config.openaiBaseUrl, 'http://10.0.0.5:8000/v1');
  assert.deepEqual(config.keyEnvAllowlist, [
    { variable: 'OPENAI_API_KEY', baseUrl: 'http://10.0.0.5:8000/v1' },
    { variable: 'ANTHROPIC_API_KEY', baseUrl: 'https://proxy.example/anthropic' },
  ]);
});

test('PALAI_KEY_ENV_ALLOWLIST: another variable is listed with the URL its key may go to', () => {
  const config = loadConfig({ PALAI_KEY_ENV_ALLOWLIST: 'OPENAI_API_KEY, LITELLM_KEY=https://litellm.internal:4000/v1' });
  assert.deepEqual(config.keyEnvAllowlist, [
    { variable: 'OPENAI_API_KEY', baseUrl: 'https://api.openai.com/v1' },
    { variable: 'LITELLM_KEY', baseUrl: 'https://litellm.internal:4000/v1' },
  ]);
});

test('a variable without a URL, a provider variable with one, a bad URL or a duplicate stops the start with a ConfigError saying so', () => {
  configError({ PALAI_KEY_ENV_ALLOWLIST: 'OPENAI_API_KEY,MY_KEY' }, /say where MY_KEY's key may be sent, as MY_KEY=https:\/\/host\/v1/);
  configError(
    { PALAI_KEY_ENV_ALLOWLIST: 'OPENAI_API_KEY=https://elsewhere.example/v1' },
    /list OPENAI_API_KEY without a URL; its base URL is set by OPENAI_BASE_URL/,
  );
  configError({ PALAI_KEY_ENV_ALLOWLIST: 'MY_KEY=not a url' }, /MY_KEY=not a url.*must be an http or https URL/);
  configError({ PALAI_KEY_ENV_ALLOWLIST: 'MY_KEY=file:///etc/passwd' }, /must be an http or https URL/);
  configError({ PALAI_KEY_ENV_ALLOWLIST: 'MY_KEY=https://a.example,MY_KEY=https://b.example' }, /MY_KEY is listed twice/);
  configError({ PALAI_KEY_ENV_ALLOWLIST: 'MY-KEY=https://a.example' }, /is not an environment variable name/);
  configError({ OPENAI_BASE_URL: 'api.openai.com' }, /OPENAI_BASE_URL must be an http or https URL/);
});

test('base URLs are compared as the SDK uses them: trailing slashes, default ports and case do not matter, the path does', () => {
  assert.ok(sameBaseUrl('openai', 'https://api.openai.com/v1', 'https://API.openai.com:443/v1/'));
  assert.ok(!sameBaseUrl('openai', 'https://api.openai.com/v1', 'http://api.openai.com/v1'));
  assert.ok(!sameBaseUrl('openai', 'https://api.openai.com/v1', 'https://api.openai.com/v2'));
  assert.ok(!sameBaseUrl('openai', 'https://api.openai.com/v1', 'https://api.openai.com:8443/v1'));
  assert.ok(!sameBaseUrl('openai', 'https://api.openai.com/v1', 'https://api.openai.com.evil.example/v1'));
  assert.ok(!sameBaseUrl('openai', 'https://api.openai.com/v1', 'https://user@evil.example/v1'));
  assert.ok(!sameBaseUrl('openai', 'not a url', 'not a url'));
  // The Anthropic SDK adds /v1 itself, so a base URL given with it is the same one.
  assert.ok(sameBaseUrl('anthropic', 'https://api.anthropic.com', 'https://api.anthropic.com/v1/'));
  assert.ok(!sameBaseUrl('openai', 'https://api.openai.com', 'https://api.openai.com/v1'));
});

test("an agent's model block gets the server key only at the operator's base URL; any other URL gets none", async () => {
  const config = loadConfig({});
  const secrets = createSecretStore({ box: null, env: ENV, policy: config });
  const resolve = (model: ModelSpec) => resolveModel(NO_STORE, secrets, 'proj_1', model, config);
  for (const [provider, key] of [
    ['openai', ENV.OPENAI_API_KEY],
    ['openai-chat', ENV.OPENAI_API_KEY],
    ['anthropic', ENV.ANTHROPIC_API_KEY],
  ] as const) {
    const bound = provider === 'anthropic' ? config.anthropicBaseUrl : config.openaiBaseUrl;
    assert.deepEqual((await resolve({ provider, name: 'm' })).credentials, { apiKey: key, baseUrl: bound }, provider);
    assert.equal((await resolve({ provider, name: 'm', base_url: `${bound}/` })).credentials.apiKey, key, provider);
    for (const base_url of ['https://collector.example/v1', 'http://127.0.0.1:9/v1', bound.replace('https:', 'http:')]) {
      assert.deepEqual((await resolve({ provider, name: 'm', base_url })).credentials, { apiKey: null, baseUrl: base_url }, `${provider} ${base_url}`);
    }
  }
  assert.deepEqual((await resolve({ provider: 'fake' })).credentials, { apiKey: null, baseUrl: null });
});

test('with OPENAI_BASE_URL set, a model block without base_url goes there with the key, and api.openai.com gets no key', async () => {
  const config = loadConfig({ OPENAI_BASE_URL: 'http://vllm.internal:8000/v1' });
  const secrets = createSecretStore({ box: null, env: ENV, policy: config });
  const resolve = (model: ModelSpec) => resolveModel(NO_STORE, secrets, 'proj_1', model, config);
  assert.deepEqual((await resolve({ provider: 'openai-chat', name: 'm' })).credentials, {
    apiKey: ENV.OPENAI_API_KEY,
    baseUrl: 'http://vllm.internal:8000/v1',
  });
  assert.equal((await resolve({ provider: 'openai', name: 'm', base_url: 'https://api.openai.com/v1' })).credentials.apiKey, null);
});
