// What `palai doctor` says about each model connection.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ConnectionRow } from '../../core/models/connections.js';
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
