// The secret store: a value goes in once and comes back only through reveal,
// only to the project that stored it; the table holds it sealed; no error
// quotes it; the operator's keys are the allow-listed variables as they were at
// start. And a store from before the secret store keeps its connection keys.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProject } from '../../core/auth/projects.js';
import { loadConfig } from '../../core/config.js';
import { connectionView, type ConnectionRow } from '../../core/models/connections.js';
import { resolveModel } from '../../core/models/resolve.js';
import { SecretBox } from '../../core/secrets/secret-box.js';
import { SecretUnavailableError, type SecretStore } from '../../core/secrets/secret-port.js';
import { createSecretStore } from '../../core/secrets/secret-store.js';
import { loadMigrations, migrate } from '../../core/store/migrate.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';

const SECRET_KEY = 'secret-store-test-key';
/** Recognisable, so a test can prove it never shows up where it must not. */
const PLAINTEXT = 'sk-secret-store-plain-7d3f9b1e5a2c4e68';
const ROTATED = 'sk-secret-store-rotated-2a6c8e0f4b1d3f57';
const box = new SecretBox(SECRET_KEY);
const policy = loadConfig({ PALAI_KEY_ENV_ALLOWLIST: 'OPENAI_API_KEY,LISTED_KEY=https://models.example/v1' });
const store = createSecretStore({ box, env: {}, policy });

/** Everything an error shows: its message, its name and any members it carries. */
const shown = (error: unknown): string => `${String(error)} ${JSON.stringify(error)} ${(error as Error).stack ?? ''}`;

/** Asserts `work` fails with a SecretUnavailableError of this reason, and returns it. */
async function unavailable(work: Promise<unknown>, reason: SecretUnavailableError['reason']): Promise<SecretUnavailableError> {
  const error = await work.then(
    () => assert.fail('expected a SecretUnavailableError'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof SecretUnavailableError, String(error));
  assert.equal(error.reason, reason);
  return error;
}

async function ciphertextOf(database: TestDatabase, id: string): Promise<string> {
  const { rows } = await database.db.query<{ ciphertext: string }>('SELECT ciphertext FROM secrets WHERE id = $1', [id]);
  return rows[0].ciphertext;
}

for (const kind of storeKinds) {
  const skip = kind === 'postgres' ? ((await postgresUnavailable()) ?? false) : false;

  describe(`secret store [${kind}]`, { skip }, () => {
    let database: TestDatabase;
    let projectId: string;
    let otherProjectId: string;
    before(async () => {
      database = await openTestDatabase(kind);
      await migrate(database.db);
      projectId = (await createProject(database.db, 'secrets')).id;
      otherProjectId = (await createProject(database.db, 'elsewhere')).id;
    });
    after(() => database?.drop());

    test('put returns a reference, and reveal gives the value back', async () => {
      const ref = await store.put(database.db, projectId, 'webhook-secret', PLAINTEXT);
      assert.match(ref.id, /^sec_[0-9a-hjkmnp-tv-z]{26}$/);
      assert.deepEqual(ref, { id: ref.id, last4: PLAINTEXT.slice(-4) });
      assert.equal(await store.reveal(database.db, projectId, ref.id), PLAINTEXT);
      // A short secret's last four would give most of it away.
      assert.equal((await store.put(database.db, projectId, 'bot-token', 'short-token')).last4, null);
    });

    test('the table holds ciphertext, never the value, and two puts of one value differ', async () => {
      const a = await store.put(database.db, projectId, 'mcp-header', PLAINTEXT);
      const b = await store.put(database.db, projectId, 'mcp-header', PLAINTEXT);
      const [sealedA, sealedB] = [await ciphertextOf(database, a.id), await ciphertextOf(database, b.id)];
      assert.notEqual(sealedA, sealedB);
      assert.match(sealedA, /^v1\./);
      const { rows } = await database.db.query('SELECT * FROM secrets');
      assert.ok(!JSON.stringify(rows).includes(PLAINTEXT), 'a row holds the value in clear');
    });

    test('another project cannot reveal, replace or remove it: not found, and the value is not in the error', async () => {
      const ref = await store.put(database.db, projectId, 'remote-agent-header', PLAINTEXT);
      const error = await unavailable(store.reveal(database.db, otherProjectId, ref.id), 'missing');
      assert.equal(error.slug, 'not-found');
      assert.ok(!shown(error).includes(PLAINTEXT));
      await unavailable(store.replace(database.db, otherProjectId, ref.id, ROTATED), 'missing');
      assert.equal(await store.remove(database.db, otherProjectId, ref.id), false);
      assert.equal(await store.reveal(database.db, projectId, ref.id), PLAINTEXT, 'still there, unchanged');
    });

    test('after remove, reveal is not found', async () => {
      const ref = await store.put(database.db, projectId, 'bot-token', PLAINTEXT);
      assert.equal(await store.remove(database.db, projectId, ref.id), true);
      await unavailable(store.reveal(database.db, projectId, ref.id), 'missing');
      assert.equal(await store.remove(database.db, projectId, ref.id), false);
    });

    test('a secret something still refers to cannot be removed', async () => {
      const ref = await store.put(database.db, projectId, 'model-key', PLAINTEXT);
      await database.db.query(
        "INSERT INTO model_connections (id, project_id, name, provider, api_key_secret_id) VALUES ('mconn_holder', $1, 'holder', 'openai', $2)",
        [projectId, ref.id],
      );
      await assert.rejects(store.remove(database.db, projectId, ref.id));
      assert.equal(await store.reveal(database.db, projectId, ref.id), PLAINTEXT);
    });

    test('replace rotates the value under the same id', async () => {
      const ref = await store.put(database.db, projectId, 'webhook-secret', PLAINTEXT);
      const earlier = await ciphertextOf(database, ref.id);
      const rotated = await store.replace(database.db, projectId, ref.id, ROTATED);
      assert.deepEqual(rotated, { id: ref.id, last4: ROTATED.slice(-4) });
      assert.equal(await store.reveal(database.db, projectId, ref.id), ROTATED);
      assert.notEqual(await ciphertextOf(database, ref.id), earlier);
    });

    test('without PALAI_SECRET_KEY nothing is stored: put is refused naming it, and nothing is revealed', async () => {
      const keyless = createSecretStore({ box: null, env: {}, policy });
      const {
        rows: [{ count }],
      } = await database.db.query<{ count: number }>('SELECT count(*)::integer AS count FROM secrets');
      const refused = await unavailable(keyless.put(database.db, projectId, 'bot-token', PLAINTEXT), 'no-secret-key');
      assert.equal(refused.slug, 'invalid-request');
      assert.match(refused.message, /PALAI_SECRET_KEY/);
      assert.ok(!shown(refused).includes(PLAINTEXT));
      const later = await database.db.query<{ count: number }>('SELECT count(*)::integer AS count FROM secrets');
      assert.equal(later.rows[0].count, count);

      const ref = await store.put(database.db, projectId, 'bot-token', PLAINTEXT);
      const closed = await unavailable(keyless.reveal(database.db, projectId, ref.id), 'no-secret-key');
      assert.match(closed.message, /PALAI_SECRET_KEY is not set/);
    });

    test('no error of put or reveal carries the value or its ciphertext', async () => {
      // A store failure (no such project) while storing.
      const failed = await store.put(database.db, 'proj_missing', 'bot-token', PLAINTEXT).then(
        () => assert.fail('stored for a project that does not exist'),
        (e: unknown) => e,
      );
      assert.ok(!shown(failed).includes(PLAINTEXT), shown(failed));
      // Sealed under another key: the cipher's failure is not passed on.
      const ref = await store.put(database.db, projectId, 'mcp-header', PLAINTEXT);
      const wrongKey = createSecretStore({ box: new SecretBox('another-secret-key'), env: {}, policy });
      const error = await unavailable(wrongKey.reveal(database.db, projectId, ref.id), 'undecryptable');
      assert.match(error.message, /cannot be decrypted with this PALAI_SECRET_KEY/);
      assert.ok(!shown(error).includes(PLAINTEXT));
      assert.ok(!shown(error).includes(await ciphertextOf(database, ref.id)));
    });
  });

  describe(`a store from before the secret store [${kind}]`, { skip }, () => {
    let database: TestDatabase;
    after(() => database?.drop());

    test("the migration moves a connection's sealed key into the secret store, and the connection still resolves it", async () => {
      database = await openTestDatabase(kind);
      const migrations = loadMigrations();
      await migrate(
        database.db,
        migrations.filter((m) => m.version < 6),
      );
      // A connection stored the old way: its key sealed in its own row.
      const created = new Date('2025-03-04T05:06:07.089Z');
      await database.db.query("INSERT INTO projects (id, name) VALUES ('proj_old', 'old')");
      await database.db.query(
        `INSERT INTO model_connections (id, project_id, name, provider, base_url, api_key_encrypted, api_key_last4, created_at)
         VALUES ('mconn_old', 'proj_old', 'old', 'openai-chat', 'https://models.example/v1', $1, $2, $3)`,
        [box.seal(PLAINTEXT), PLAINTEXT.slice(-4), created],
      );
      await database.db.query("INSERT INTO model_connections (id, project_id, name, provider) VALUES ('mconn_keyless', 'proj_old', 'keyless', 'openai')");

      assert.ok((await migrate(database.db, migrations)).includes(6));

      const { rows } = await database.db.query<ConnectionRow>("SELECT * FROM model_connections WHERE project_id = 'proj_old' ORDER BY id");
      const [keyless, old] = rows;
      assert.ok(!('api_key_encrypted' in old), 'the old column is gone');
      assert.equal(keyless.api_key_secret_id, null);
      // The id has newId's shape, its time part the connection's creation.
      const id = old.api_key_secret_id!;
      assert.match(id, /^sec_[0-9a-hjkmnp-tv-z]{26}$/);
      const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
      assert.equal(
        [...id.slice(4, 14)].reduce((value, ch) => value * 32 + alphabet.indexOf(ch), 0),
        created.getTime(),
      );
      assert.deepEqual(connectionView(old).api_key, { set: true, last4: PLAINTEXT.slice(-4) });

      const resolved = await resolveModel(database.db, store, 'proj_old', { connection: 'old' }, policy);
      assert.deepEqual(resolved.credentials, { apiKey: PLAINTEXT, baseUrl: 'https://models.example/v1' });
    });
  });
}

describe('server keys', () => {
  const env = {
    OPENAI_API_KEY: 'sk-server-openai',
    ANTHROPIC_API_KEY: 'sk-server-anthropic',
    LISTED_KEY: 'sk-listed',
    UNLISTED_KEY: 'sk-unlisted',
    PALAI_DATABASE_URL: 'postgres://u:p@h/db',
  };
  let secrets: SecretStore;
  before(() => {
    secrets = createSecretStore({ box: null, env, policy });
  });

  test('only allow-listed variables are served: the provider keys and the PALAI_KEY_ENV_ALLOWLIST entries', () => {
    assert.equal(secrets.serverKey('OPENAI_API_KEY'), env.OPENAI_API_KEY);
    // Not in this allow list, but an agent's anthropic model block still takes its provider's key.
    assert.equal(secrets.serverKey('ANTHROPIC_API_KEY'), env.ANTHROPIC_API_KEY);
    assert.equal(secrets.serverKey('LISTED_KEY'), env.LISTED_KEY);
    for (const name of ['UNLISTED_KEY', 'PALAI_DATABASE_URL', 'PALAI_SECRET_KEY', 'HOME', 'toString', '__proto__'])
      assert.equal(secrets.serverKey(name), undefined, name);
  });

  test('the keys are taken once: a later change to the environment changes nothing', () => {
    const live: Record<string, string | undefined> = { OPENAI_API_KEY: 'sk-at-start' };
    const captured = createSecretStore({ box: null, env: live, policy });
    live.OPENAI_API_KEY = 'sk-changed-later';
    live.LISTED_KEY = 'sk-added-later';
    assert.equal(captured.serverKey('OPENAI_API_KEY'), 'sk-at-start');
    assert.equal(captured.serverKey('LISTED_KEY'), undefined);
  });

  test('an empty variable is an unset one', () => {
    assert.equal(createSecretStore({ box: null, env: { OPENAI_API_KEY: '' }, policy }).serverKey('OPENAI_API_KEY'), undefined);
  });
});
