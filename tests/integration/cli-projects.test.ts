// `palai projects` and `palai keys` on a multi-tenant store, run as a user runs
// them (child processes of bin/palai.mjs), on the embedded store and on
// PostgreSQL. What a printed secret opens is checked on the store itself with
// `authenticate`, the function every request goes through. Each test has its
// own store; an embedded store admits one process at a time, so the test opens
// it only between commands.
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { authenticate, createApiKey } from '../../core/auth/api-keys.js';
import { newId } from '../../core/ids.js';
import type { Db, StoreKind } from '../../core/store/db.js';
import { loadMigrations, migrate } from '../../core/store/migrate.js';
import { PgDb } from '../../core/store/pg-db.js';
import { PgliteDb } from '../../core/store/pglite-db.js';
import { cleanUpProcesses, runPalai, tempDir, userEnv, type Result } from '../support/cli.js';
import { freshPostgresDatabase, postgresUnavailable, storeKinds } from '../support/stores.js';

/** Generous: the first open of an embedded store runs initdb in WASM. */
const COMMAND_TIMEOUT_MS = 90_000;

after(cleanUpProcesses);

interface CliStore {
  kind: StoreKind;
  /** Runs `node bin/palai.mjs …` on this store. */
  palai(args: string[]): Promise<Result>;
  /** Opens the store in this process for `work`, closed again before the next command. */
  inspect<T>(work: (db: Db) => Promise<T>): Promise<T>;
  drop(): Promise<void>;
}

/** An embedded store migrated once by `palai migrate`, copied for each test: initdb runs only once. */
let embeddedTemplate: string | null = null;

async function ensureEmbeddedTemplate(): Promise<string> {
  if (!embeddedTemplate) {
    const template = join(tempDir('palai-projects-template-'), 'home');
    const migrated = await runPalai(['migrate'], userEnv({ PALAI_HOME: template }), COMMAND_TIMEOUT_MS);
    assert.equal(migrated.code, 0, migrated.stderr);
    embeddedTemplate = template;
  }
  return embeddedTemplate;
}

async function embeddedStore(options: { empty?: boolean } = {}): Promise<CliStore> {
  const home = join(tempDir('palai-projects-'), 'home');
  if (!options.empty) cpSync(await ensureEmbeddedTemplate(), home, { recursive: true });
  return {
    kind: 'pglite',
    palai: (args) => runPalai(args, userEnv({ PALAI_HOME: home }), COMMAND_TIMEOUT_MS),
    async inspect(work) {
      const db = await PgliteDb.open(join(home, 'db'));
      try {
        return await work(db);
      } finally {
        await db.close();
      }
    },
    drop: async () => undefined,
  };
}

async function postgresStore(): Promise<CliStore> {
  const database = await freshPostgresDatabase();
  return {
    kind: 'postgres',
    palai: (args) => runPalai(args, userEnv({ PALAI_HOME: tempDir('palai-projects-pg-'), PALAI_DATABASE_URL: database.url }), COMMAND_TIMEOUT_MS),
    async inspect(work) {
      const db = new PgDb(database.url, 2);
      try {
        return await work(db);
      } finally {
        await db.close();
      }
    },
    drop: () => database.drop(),
  };
}

interface Created {
  projectId: string;
  projectName: string;
  keyId: string;
  keyName: string;
  secret: string;
}

/** The three stdout lines of `palai projects create`; the secret appears nowhere else. */
function projectCreated(result: Result): Created {
  assert.equal(result.code, 0, result.stderr);
  const match = result.stdout.match(
    /^Created project (proj_\w+) \(([^)]+)\)\.\nCreated API key (key_\w+) \(([^)]+)\) for project \1 \(\2\)\.\nSecret \(shown once, store it now\): (palai_sk_\S+)\n$/,
  );
  assert.ok(match, result.stdout);
  const [, projectId, projectName, keyId, keyName, secret] = match;
  assert.ok(!result.stderr.includes(secret), 'the secret goes to stdout only');
  return { projectId, projectName, keyId, keyName, secret };
}

/** The two stdout lines of `palai keys create`. */
function keyCreated(result: Result): Omit<Created, 'projectName'> {
  assert.equal(result.code, 0, result.stderr);
  const match = result.stdout.match(
    /^Created API key (key_\w+) \(([^)]+)\) for project (proj_\w+) \([^)]+\)\.\nSecret \(shown once, store it now\): (palai_sk_\S+)\n$/,
  );
  assert.ok(match, result.stdout);
  const [, keyId, keyName, projectId, secret] = match;
  assert.ok(!result.stderr.includes(secret), 'the secret goes to stdout only');
  return { keyId, keyName, projectId, secret };
}

/** One failed command: exit 1, nothing on stdout, exactly one `palai: …` line on stderr. */
function refused(result: Result, line: RegExp): void {
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.equal(result.stdout, '');
  const lines = result.stderr
    .trimEnd()
    .split('\n')
    .filter((l) => !l.startsWith('Applied migration'));
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0], line);
}

/** The data rows of a table printed by the CLI, as arrays of cells (after checking its header). */
function tableRows(result: Result, header: RegExp): string[][] {
  assert.equal(result.code, 0, result.stderr);
  const [head, ...rows] = result.stdout.trimEnd().split('\n');
  assert.match(head, header);
  return rows.map((row) => row.split(/\s{2,}/));
}

const KEYS_HEADER = /^ID\s+PROJECT\s+NAME\s+PREFIX\s+CREATED\s+REVOKED$/;
const PROJECTS_HEADER = /^ID\s+NAME\s+CREATED\s+ACTIVE_KEYS$/;

async function projectOf(store: CliStore, secret: string): Promise<string | null> {
  return store.inspect(async (db) => (await authenticate(db, secret))?.projectId ?? null);
}

async function counts(store: CliStore): Promise<{ projects: number; keys: number }> {
  return store.inspect(async (db) => {
    const { rows } = await db.query<{ projects: number; keys: number }>(
      'SELECT (SELECT count(*)::integer FROM projects) AS projects, (SELECT count(*)::integer FROM api_keys) AS keys',
    );
    return rows[0];
  });
}

for (const kind of storeKinds) {
  const unavailable = kind === 'postgres' ? await postgresUnavailable() : null;
  const openStore = (options?: { empty?: boolean }) => (kind === 'pglite' ? embeddedStore(options) : postgresStore());

  describe(`palai projects and keys on a multi-tenant store [${kind}]`, { skip: unavailable ?? false, timeout: 600_000 }, () => {
    let store: CliStore;
    before(async () => {
      if (kind === 'pglite') await ensureEmbeddedTemplate();
    });

    async function onFreshStore(work: () => Promise<void>, options?: { empty?: boolean }): Promise<void> {
      store = await openStore(options);
      try {
        await work();
      } finally {
        await store.drop();
      }
    }

    test('projects create prints a first key that opens that project and no other; projects list counts active keys without secrets', () =>
      onFreshStore(async () => {
        const acme = projectCreated(await store.palai(['projects', 'create', 'acme']));
        assert.deepEqual([acme.projectName, acme.keyName], ['acme', 'default']);
        const beta = projectCreated(await store.palai(['projects', 'create', 'beta.eu-1', '--key-name', 'ops']));
        assert.deepEqual([beta.projectName, beta.keyName], ['beta.eu-1', 'ops']);
        assert.notEqual(acme.projectId, beta.projectId);

        assert.equal(await projectOf(store, acme.secret), acme.projectId);
        assert.equal(await projectOf(store, beta.secret), beta.projectId);

        const list = await store.palai(['projects', 'list']);
        assert.deepEqual(
          tableRows(list, PROJECTS_HEADER).map(([id, name, created, keys]) => [id, name, /^\d{4}-\d\d-\d\dT.+Z$/.test(created), keys]),
          [
            [acme.projectId, 'acme', true, '1'],
            [beta.projectId, 'beta.eu-1', true, '1'],
          ],
        );
        assert.ok(!list.stdout.includes(acme.secret) && !list.stdout.includes(beta.secret));
      }));

    test('a duplicate or invalid project name is refused with one line and nothing is written', () =>
      onFreshStore(async () => {
        const acme = projectCreated(await store.palai(['projects', 'create', 'acme']));

        refused(
          await store.palai(['projects', 'create', 'acme']),
          new RegExp(`^palai: A project named "acme" already exists \\(${acme.projectId}\\); see palai projects list\\.$`),
        );
        for (const bad of ['Acme', 'has space', '.acme', 'proj_acme', 'a'.repeat(65)]) {
          refused(
            await store.palai(['projects', 'create', bad]),
            /^palai: Invalid project name ".*": use 1–64 lowercase letters, digits, "-", "_" or "\.", starting with a letter or digit, not starting with "proj_"\.$/,
          );
        }
        // The project and its key are one transaction: a key that cannot be created leaves no project behind.
        refused(await store.palai(['projects', 'create', 'gamma', '--key-name', '']), /^palai: Invalid API key name "": use 1–64 printable characters\.$/);
        if (store.kind === 'postgres') {
          // Two operators at once: the unique index decides, and the loser is told so.
          const racing = await Promise.all([store.palai(['projects', 'create', 'delta']), store.palai(['projects', 'create', 'delta'])]);
          assert.deepEqual(racing.map((r) => r.code).sort(), [0, 1], racing.map((r) => r.stderr).join('\n'));
          refused(
            racing.find((r) => r.code === 1)!,
            /^palai: A project named "delta" already exists/,
          );
        }

        const expected = store.kind === 'postgres' ? { projects: 2, keys: 2 } : { projects: 1, keys: 1 };
        assert.deepEqual(await counts(store), expected);
      }));

    test('keys create takes a project by name or by id, uses the only project by default, and refuses to guess among several', () =>
      onFreshStore(async () => {
        const acme = projectCreated(await store.palai(['projects', 'create', 'acme']));
        const onlyOne = keyCreated(await store.palai(['keys', 'create', '--name', 'ci']));
        assert.equal(onlyOne.projectId, acme.projectId, 'with one project, keys create uses it');

        const beta = projectCreated(await store.palai(['projects', 'create', 'beta']));
        const byName = keyCreated(await store.palai(['keys', 'create', '--project', 'beta', '--name', 'deploy']));
        const byId = keyCreated(await store.palai(['keys', 'create', '--project', acme.projectId]));
        assert.deepEqual([byName.projectId, byName.keyName, byId.projectId, byId.keyName], [beta.projectId, 'deploy', acme.projectId, 'default']);
        assert.equal(await projectOf(store, byName.secret), beta.projectId);
        assert.equal(await projectOf(store, byId.secret), acme.projectId);

        const both = `${acme.projectId} \\(acme\\), ${beta.projectId} \\(beta\\)`;
        refused(await store.palai(['keys', 'create']), new RegExp(`^palai: The store has 2 projects; choose one with --project NAME\\|ID: ${both}\\.$`));
        refused(await store.palai(['keys', 'create', '--project', 'nope']), new RegExp(`^palai: No project "nope"; projects: ${both}\\.$`));
        refused(await store.palai(['keys', 'create', '--project', 'proj_nope']), new RegExp(`^palai: No project "proj_nope"; projects: ${both}\\.$`));
        assert.deepEqual(await counts(store), { projects: 2, keys: 5 }, 'the refused commands created nothing');
      }));

    test('keys list shows each project its own keys, by prefix only', () =>
      onFreshStore(async () => {
        const acme = projectCreated(await store.palai(['projects', 'create', 'acme']));
        const beta = projectCreated(await store.palai(['projects', 'create', 'beta']));
        const ci = keyCreated(await store.palai(['keys', 'create', '--project', 'acme', '--name', 'ci']));

        const acmeRows = tableRows(await store.palai(['keys', 'list', '--project', 'acme']), KEYS_HEADER);
        assert.deepEqual(
          acmeRows.map(([id, project, name, prefix, , revoked]) => [id, project, name, prefix, revoked]),
          [
            [acme.keyId, `${acme.projectId} (acme)`, 'default', `${acme.secret.slice(0, 12)}…`, '-'],
            [ci.keyId, `${acme.projectId} (acme)`, 'ci', `${ci.secret.slice(0, 12)}…`, '-'],
          ],
        );
        const betaRows = tableRows(await store.palai(['keys', 'list', '--project', beta.projectId]), KEYS_HEADER);
        assert.deepEqual(
          betaRows.map(([id]) => id),
          [beta.keyId],
        );

        const all = await store.palai(['keys', 'list']);
        assert.deepEqual(
          tableRows(all, KEYS_HEADER)
            .map(([id]) => id)
            .sort(),
          [acme.keyId, beta.keyId, ci.keyId].sort(),
        );
        for (const secret of [acme.secret, beta.secret, ci.secret]) assert.ok(!all.stdout.includes(secret), 'no secret in a list');

        refused(await store.palai(['keys', 'list', '--project', 'nope']), /^palai: No project "nope"; projects: /);
      }));

    test('a revoked key no longer authenticates, the project keeps its other keys, and revoking again or an unknown id answers clearly', () =>
      onFreshStore(async () => {
        const acme = projectCreated(await store.palai(['projects', 'create', 'acme']));
        const beta = projectCreated(await store.palai(['projects', 'create', 'beta']));
        const ci = keyCreated(await store.palai(['keys', 'create', '--project', 'acme', '--name', 'ci']));

        const revoke = await store.palai(['keys', 'revoke', ci.keyId]);
        assert.equal(revoke.code, 0, revoke.stderr);
        assert.equal(revoke.stdout, `Revoked API key ${ci.keyId} (ci) of project ${acme.projectId} (acme).\n`);
        assert.deepEqual(
          await store.inspect(async (db) => [
            await authenticate(db, ci.secret),
            (await authenticate(db, acme.secret))?.projectId,
            (await authenticate(db, beta.secret))?.projectId,
          ]),
          [null, acme.projectId, beta.projectId],
        );

        const again = await store.palai(['keys', 'revoke', ci.keyId]);
        assert.equal(again.code, 0, again.stderr);
        assert.match(again.stdout, new RegExp(`^API key ${ci.keyId} was already revoked \\(\\d{4}-\\d\\d-\\d\\dT.+Z\\)\\.\\n$`));
        refused(await store.palai(['keys', 'revoke', 'key_doesnotexist']), /^palai: No API key "key_doesnotexist"; see palai keys list\.$/);

        // Revoking a project's last key leaves it unreachable: the command says so (stderr) and how to fix it.
        const last = await store.palai(['keys', 'revoke', beta.keyId]);
        assert.equal(last.code, 0, last.stderr);
        assert.match(
          last.stderr,
          new RegExp(`^Project ${beta.projectId} \\(beta\\) has no active API key left; create one with: palai keys create --project beta$`, 'm'),
        );
        assert.equal(await projectOf(store, beta.secret), null);

        const rows = tableRows(await store.palai(['keys', 'list', '--project', 'acme']), KEYS_HEADER);
        assert.deepEqual(
          rows.map(([id, , , , , revoked]) => [id, revoked === '-']),
          [
            [acme.keyId, true],
            [ci.keyId, false],
          ],
        );
        const projects = tableRows(await store.palai(['projects', 'list']), PROJECTS_HEADER);
        assert.deepEqual(
          projects.map(([, name, , keys]) => [name, keys]),
          [
            ['acme', '1'],
            ['beta', '0'],
          ],
        );
      }));

    test('migration 0004 makes names unique on a store that already has duplicates: the oldest keeps the name, every key still works', () =>
      onFreshStore(
        async () => {
          const legacy = await store.inspect(async (db) => {
            await migrate(
              db,
              loadMigrations().filter((m) => m.version < 4),
            );
            const insert = async (name: string, age: string) => {
              const id = newId('proj');
              await db.query(`INSERT INTO projects (id, name, created_at) VALUES ($1, $2, now() - $3::interval)`, [id, name, age]);
              return { id, secret: (await createApiKey(db, id, 'legacy')).secret };
            };
            // Names the new rule would refuse ("Old Name") stay as they are: only duplicates change.
            return { older: await insert('shared', '2 days'), newer: await insert('shared', '1 day'), other: await insert('Old Name', '1 day') };
          });

          const list = await store.palai(['projects', 'list']);
          assert.match(list.stderr, /Applied migration\(s\) 4[, ]/);
          assert.deepEqual(
            tableRows(list, PROJECTS_HEADER).map(([id, name, , keys]) => [id, name, keys]),
            [
              [legacy.older.id, 'shared', '1'],
              [legacy.newer.id, `shared-${legacy.newer.id}`, '1'],
              [legacy.other.id, 'Old Name', '1'],
            ],
          );
          for (const project of [legacy.older, legacy.newer, legacy.other]) assert.equal(await projectOf(store, project.secret), project.id);

          const byName = keyCreated(await store.palai(['keys', 'create', '--project', 'shared']));
          assert.equal(byName.projectId, legacy.older.id);
          refused(await store.palai(['projects', 'create', 'shared']), /^palai: A project named "shared" already exists/);
        },
        { empty: true },
      ));
  });
}
