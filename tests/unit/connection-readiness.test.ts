// What `palai doctor` says about each model connection.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ConnectionRow } from '../../core/models/connections.js';
import { loadConfig } from '../../core/config.js';
import { connectionReadiness } from '../../core/models/resolve.js';
import { SecretBox } from '../../core/secrets/secret-box.js';

const box = new SecretBox('doctor-test-secret');
const row = (overrides: Partial<ConnectionRow>): ConnectionRow => ({
  id: 'mconn_1',
  project_id: 'proj_1',
  name: 'c',
  provider: 'openai',
  base_url: null,
  api_key_encrypted: null,
  api_key_last4: null,
  api_key_env: null,
  default_model: null,
  created_at: new Date(),
  ...overrides,
});

test('a stored key is usable only with the PALAI_SECRET_KEY it was sealed with', () => {
  const sealed = row({ api_key_encrypted: box.seal('sk-stored-key-value-1234'), api_key_last4: '1234' });
  assert.deepEqual(connectionReadiness(sealed, box), { usable: true, detail: 'stored key …1234' });
  assert.equal(connectionReadiness(sealed, null).usable, false);
  assert.match(connectionReadiness(sealed, new SecretBox('another-secret')).detail, /does not decrypt/);
});

test('a key from the environment is usable when that variable is set', () => {
  assert.deepEqual(connectionReadiness(row({ api_key_env: 'MY_KEY' }), null, { MY_KEY: 'x' }), { usable: true, detail: 'key from MY_KEY' });
  assert.deepEqual(connectionReadiness(row({ api_key_env: 'MY_KEY' }), null, {}), { usable: false, detail: 'MY_KEY is not set' });
  assert.equal(connectionReadiness(row({ provider: 'anthropic' }), null, { ANTHROPIC_API_KEY: 'k' }).detail, 'key from ANTHROPIC_API_KEY');
});

test('a connection to a local server without a key is usable, and says so', () => {
  const local = connectionReadiness(row({ provider: 'openai-chat', base_url: 'http://127.0.0.1:11434/v1' }), null, {});
  assert.equal(local.usable, true);
  assert.match(local.detail, /fine if http:\/\/127\.0\.0\.1:11434\/v1 needs none/);
});

test('sealed secrets do not contain the plaintext and differ on every seal', () => {
  const a = box.seal('sk-same-plaintext');
  const b = box.seal('sk-same-plaintext');
  assert.notEqual(a, b);
  assert.ok(!a.includes('sk-same-plaintext'));
  assert.equal(box.open(a), 'sk-same-plaintext');
});

test('palai doctor says when a connection would send a server key somewhere it is not bound to', () => {
  const config = loadConfig({ PALAI_KEY_ENV_ALLOWLIST: 'OPENAI_API_KEY,LOCAL_KEY=http://10.0.0.5:8000/v1' });
  const env = { OPENAI_API_KEY: 'sk-server-openai-0123456789', LOCAL_KEY: 'sk-local-0123456789' };
  const readiness = (overrides: Partial<ConnectionRow>) => connectionReadiness(row(overrides), null, env, config);
  assert.deepEqual(readiness({ api_key_env: 'LOCAL_KEY', base_url: 'http://10.0.0.5:8000/v1/' }), { usable: true, detail: 'key from LOCAL_KEY' });
  assert.deepEqual(readiness({ api_key_env: 'LOCAL_KEY' }), { usable: true, detail: 'key from LOCAL_KEY' });
  assert.deepEqual(readiness({ api_key_env: 'LOCAL_KEY', base_url: 'https://collector.example/v1' }), {
    usable: false,
    detail: 'its key from LOCAL_KEY may go only to http://10.0.0.5:8000/v1, not to its base_url https://collector.example/v1',
  });
  assert.deepEqual(readiness({ api_key_env: 'ANTHROPIC_API_KEY' }), { usable: false, detail: 'reads ANTHROPIC_API_KEY, which PALAI_KEY_ENV_ALLOWLIST does not allow' });
  const keyless = readiness({ base_url: 'https://collector.example/v1' });
  assert.equal(keyless.usable, true);
  assert.match(keyless.detail, /^no key \(OPENAI_API_KEY goes only to https:\/\/api\.openai\.com\/v1\)/);
  assert.deepEqual(readiness({}), { usable: true, detail: 'key from OPENAI_API_KEY' });
});
