// A row's sealed values: each value given is sealed under its purpose and
// comes back only through reveal; a value left out stays null; without
// PALAI_SECRET_KEY the owner's own problem is answered, naming the field, and
// nothing is stored; other failures pass through unchanged; removing skips the
// references a row does not have. Against the real secret store, on each store.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProject } from '../../core/auth/projects.js';
import { loadConfig } from '../../core/config.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { needsSecretKey, removeSealed, revealNamed, revealValues, sealNamed, sealValues, type Sealing } from '../../core/secrets/sealed-fields.js';
import { SecretBox } from '../../core/secrets/secret-box.js';
import { SecretUnavailableError } from '../../core/secrets/secret-port.js';
import { createSecretStore } from '../../core/secrets/secret-store.js';
import { migrate } from '../../core/store/migrate.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';

const policy = loadConfig({});
const secrets = createSecretStore({ box: new SecretBox('sealed-fields-test-key'), env: {}, policy });
const keyless = createSecretStore({ box: null, env: {}, policy });

const BOT_TOKEN = 'xoxb-sealed-fields-bot-token-9f3a';
const SIGNING = 'sealed-fields-signing-secret-61c2';

const TOKENS: Sealing = {
  purpose: { bot: 'test-bot-token', signing: 'test-signing-secret', app: 'test-app-token' },
  noSecretKey: (field) => needsSecretKey("Storing a widget's tokens", `/${field}`),
};
const HEADERS: Sealing = { purpose: 'test-header', noSecretKey: () => new PalaiError('invalid-request', 'Headers need PALAI_SECRET_KEY.') };

for (const kind of storeKinds) {
  const skip = kind === 'postgres' ? ((await postgresUnavailable()) ?? false) : false;

  describe(`sealed fields of a row [${kind}]`, { skip }, () => {
    let database: TestDatabase;
    let projectId: string;
    const purposeOf = async (id: string) => (await database.db.query<{ purpose: string }>('SELECT purpose FROM secrets WHERE id = $1', [id])).rows[0]?.purpose;
    const count = async () => (await database.db.query<{ n: number }>('SELECT count(*)::integer AS n FROM secrets')).rows[0].n;

    before(async () => {
      database = await openTestDatabase(kind);
      await migrate(database.db);
      projectId = (await createProject(database.db, 'sealed-fields')).id;
    });
    after(() => database?.drop());

    test('each value given is sealed under its purpose and revealed back; one left out stays null', async () => {
      const { db } = database;
      const sealed = await sealValues(db, secrets, projectId, TOKENS, { bot: BOT_TOKEN, signing: SIGNING, app: null });
      assert.deepEqual(Object.keys(sealed), ['bot', 'signing', 'app']);
      assert.equal(sealed.app, null);
      assert.deepEqual(sealed.bot, { id: sealed.bot.id, last4: BOT_TOKEN.slice(-4) });
      assert.equal(await purposeOf(sealed.bot.id), 'test-bot-token');
      assert.equal(await purposeOf(sealed.signing.id), 'test-signing-secret');
      const { rows } = await db.query('SELECT * FROM secrets');
      assert.ok(!JSON.stringify(rows).includes(BOT_TOKEN), 'a row holds the value in clear');

      const revealed = await revealValues(db, secrets, projectId, { bot: sealed.bot.id, signing: sealed.signing.id, app: null });
      assert.deepEqual(revealed, { bot: BOT_TOKEN, signing: SIGNING, app: null });
    });

    test("without PALAI_SECRET_KEY the owner's problem names the field, and nothing is stored", async () => {
      const before = await count();
      await assert.rejects(sealValues(database.db, keyless, projectId, TOKENS, { bot: BOT_TOKEN }), (error: unknown) => {
        assert.ok(error instanceof PalaiError && !(error instanceof SecretUnavailableError), String(error));
        assert.equal(error.slug, 'invalid-request');
        assert.equal(error.message, "Storing a widget's tokens needs PALAI_SECRET_KEY to be set on the server.");
        assert.deepEqual(error.errors, [{ pointer: '/bot', detail: 'cannot be stored without PALAI_SECRET_KEY' }]);
        assert.ok(!JSON.stringify({ ...error, message: error.message }).includes(BOT_TOKEN));
        return true;
      });
      await assert.rejects(sealNamed(database.db, keyless, projectId, HEADERS, { authorization: BOT_TOKEN }), { message: 'Headers need PALAI_SECRET_KEY.' });
      assert.equal(await count(), before);
    });

    test('any other failure passes through as it was', async () => {
      // Sealing for a project that does not exist is the store's own error, not a missing key.
      await assert.rejects(sealValues(database.db, secrets, 'proj_missing', TOKENS, { bot: BOT_TOKEN }), (error: unknown) => !(error instanceof PalaiError));
      await assert.rejects(
        revealValues(database.db, secrets, projectId, { bot: 'sec_missing' }),
        (error: unknown) => error instanceof SecretUnavailableError && error.reason === 'missing',
      );
    });

    test('a set of named values becomes the list a row keeps, in order, and comes back by name', async () => {
      const stored = await sealNamed(database.db, secrets, projectId, HEADERS, { authorization: `Bearer ${BOT_TOKEN}`, 'x-short': 'abc' });
      assert.deepEqual(
        stored.map(({ name, last4 }) => ({ name, last4 })),
        [
          { name: 'authorization', last4: BOT_TOKEN.slice(-4) },
          { name: 'x-short', last4: null },
        ],
      );
      assert.equal(await purposeOf(stored[0].secret_id), 'test-header');
      assert.deepEqual(await revealNamed(database.db, secrets, projectId, stored), { authorization: `Bearer ${BOT_TOKEN}`, 'x-short': 'abc' });
      assert.deepEqual(await revealNamed(database.db, secrets, projectId, []), {});
    });

    test('removing drops the references a row has and skips the ones it has not', async () => {
      const sealed = await sealValues(database.db, secrets, projectId, TOKENS, { bot: BOT_TOKEN, signing: SIGNING });
      const before = await count();
      await database.db.transaction((tx) => removeSealed(tx, secrets, projectId, [sealed.bot.id, null, undefined]));
      assert.equal(await count(), before - 1);
      await assert.rejects(
        revealValues(database.db, secrets, projectId, { bot: sealed.bot.id }),
        (error: unknown) => error instanceof SecretUnavailableError && error.reason === 'missing',
      );
      assert.equal((await revealValues(database.db, secrets, projectId, { signing: sealed.signing.id })).signing, SIGNING);
    });
  });
}
