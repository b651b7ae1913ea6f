// What `palai doctor` says about each model connection.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ConnectionRow } from '../../core/models/connections.js';
import { loadConfig } from '../../core/config.js';
import { connectionReadiness } from '../../core/models/resolve.js';
import { SecretBox } from '../../core/secrets/secret-box.js';
import { createSecretStore } from '../../core/secrets/secret-store.js';
import { migrate } from '../../core/store/migrate.js';
import { PgliteDb } from '../../core/store/pglite-db.js';

const box = new SecretBox('doctor-test-secret');
/** Only a stored key is looked up; an embedded store holds it. */
let db: PgliteDb;
before(async () => {
  db = await PgliteDb.open(null);
  await migrate(db);
  await db.query("INSERT INTO projects (id, name) VALUES ('proj_1', 'p')");
});
after(() => db.close());

/** A store as a server with this secret key (or none) and this environment would build it. */
const storeWith = (secretBox: SecretBox | null, env: Record<string, string> = {}, policy = loadConfig({})) =>
  createSecretStore({ box: secretBox, env, policy });

const row = (overrides: Partial<ConnectionRow>): ConnectionRow => ({
  id: 'mconn_1',
  project_id: 'proj_1',
  name: 'c',
  provider: 'openai',
  base_url: null,
  api_key_secret_id: null,
  api_key_last4: null,
  api_key_env: null,
  default_model: null,
  created_at: new Date(),
  ...overrides,
});

test('a stored key is usable only with the PALAI_SECRET_KEY it was sealed with', async () => {
  const ref = await storeWith(box).put(db, 'proj_1', 'model-key', 'sk-stored-key-value-1234');
  const sealed = row({ api_key_secret_id: ref.id, api_key_last4: ref.last4 });
  assert.deepEqual(await connectionReadiness(db, storeWith(box), sealed), { usable: true, detail: 'stored key …1234' });
  assert.deepEqual(await connectionReadiness(db, storeWith(null), sealed), { usable: false, detail: 'has a stored key, but PALAI_SECRET_KEY is not set' });
  assert.match((await connectionReadiness(db, storeWith(new SecretBox('another-secret')), sealed)).detail, /does not decrypt/);
});

test('a key from the environment is usable when that variable is set', async () => {
  const policy = loadConfig({ PALAI_KEY_ENV_ALLOWLIST: 'ANTHROPIC_API_KEY,MY_KEY=https://models.example/v1' });
  assert.deepEqual(await connectionReadiness(db, storeWith(null, { MY_KEY: 'x' }, policy), row({ api_key_env: 'MY_KEY' })), {
    usable: true,
    detail: 'key from MY_KEY',
  });
  assert.deepEqual(await connectionReadiness(db, storeWith(null, {}, policy), row({ api_key_env: 'MY_KEY' })), { usable: false, detail: 'MY_KEY is not set' });
  assert.equal(
    (await connectionReadiness(db, storeWith(null, { ANTHROPIC_API_KEY: 'k' }), row({ provider: 'anthropic' }))).detail,
    'key from ANTHROPIC_API_KEY',
  );
});

test('a connection to a local server without a key is usable, and says so', async () => {
  const local = await connectionReadiness(db, storeWith(null), row({ provider: 'openai-chat', base_url: 'http://127.0.0.1:11434/v1' }));
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

test('palai doctor says when a connection would send a server key somewhere it is not bound to', async () => {
  const config = loadConfig({ PALAI_KEY_ENV_ALLOWLIST: 'OPENAI_API_KEY,LOCAL_KEY=http://10.0.0.5:8000/v1' });
  const secrets = storeWith(null, { OPENAI_API_KEY: 'sk-server-openai-0123456789', LOCAL_KEY: 'sk-local-0123456789' }, config);
  const readiness = (overrides: Partial<ConnectionRow>) => connectionReadiness(db, secrets, row(overrides), config);
  assert.deepEqual(await readiness({ api_key_env: 'LOCAL_KEY', base_url: 'http://10.0.0.5:8000/v1/' }), { usable: true, detail: 'key from LOCAL_KEY' });
  assert.deepEqual(await readiness({ api_key_env: 'LOCAL_KEY' }), { usable: true, detail: 'key from LOCAL_KEY' });
  assert.deepEqual(await readiness({ api_key_env: 'LOCAL_KEY', base_url: 'https://collector.example/v1' }), {
    usable: false,
    detail: 'its key from LOCAL_KEY may go only to http://10.0.0.5:8000/v1, not to its base_url https://collector.example/v1',
  });
  assert.deepEqual(await readiness({ api_key_env: 'ANTHROPIC_API_KEY' }), {
    usable: false,
    detail: 'reads ANTHROPIC_API_KEY, which PALAI_KEY_ENV_ALLOWLIST does not allow',
  });
  const keyless = await readiness({ base_url: 'https://collector.example/v1' });
  assert.equal(keyless.usable, true);
  assert.match(keyless.detail, /^no key \(OPENAI_API_KEY goes only to https:\/\/api\.openai\.com\/v1\)/);
  assert.deepEqual(await readiness({}), { usable: true, detail: 'key from OPENAI_API_KEY' });
});
