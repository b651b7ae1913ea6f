// The one-shot `palai` commands, run as a user runs them (child processes of
// bin/palai.mjs) against a temporary embedded store, plus the PostgreSQL cases.
// Steps share one store and run in order: an embedded store admits one process at a time.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { listAgents } from '../../core/agents/agents.js';
import { listProjects } from '../../core/auth/projects.js';
import { PgliteDb } from '../../core/store/pglite-db.js';
import { cleanUpProcesses, ROOT, runPalai, tempDir, userEnv, type Result } from '../support/cli.js';
import { freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';

/** Generous: the first open of an embedded store runs initdb in WASM. */
const COMMAND_TIMEOUT_MS = 90_000;

let dir = '';
let home = '';
before(() => {
  dir = tempDir('palai-cli-');
  home = join(dir, 'home');
});
after(cleanUpProcesses);

/** Runs `node bin/palai.mjs …` to completion (killed after the timeout) in a user's environment on the test store. */
function palai(args: string[], extraEnv: Record<string, string> = {}): Promise<Result> {
  return runPalai(args, userEnv({ PALAI_HOME: home, ...extraEnv }), COMMAND_TIMEOUT_MS);
}

const noStack = (result: Result) => assert.doesNotMatch(result.stderr, /\n\s+at /, `no stack trace: ${result.stderr}`);

function writeYaml(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('palai commands on an embedded store', { timeout: 300_000 }, () => {
  // Running it again is covered on PostgreSQL below and by the e2e serve test.
  test('migrate creates the store and says which migrations it applied', async () => {
    const migrate = await palai(['migrate']);
    assert.equal(migrate.code, 0, migrate.stderr);
    assert.match(migrate.stdout, /Applied migration 0001_\w+\n(Applied migration \d{4}_\w+\n)*Up to date/);
  });

  test('keys create shows the secret once, list never shows it, revoke marks the key revoked', async () => {
    const first = await palai(['keys', 'create']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /Created project proj_\w+ \(default\)/, 'an empty store gets its default project');
    const firstSecret = first.stdout.match(/palai_sk_\S+/)?.[0];
    assert.ok(firstSecret, first.stdout);

    const second = await palai(['keys', 'create', '--project', 'default', '--name', 'ci']);
    assert.equal(second.code, 0, second.stderr);
    const ciKey = second.stdout.match(/Created API key (key_\w+) \(ci\)/)?.[1];
    const ciSecret = second.stdout.match(/palai_sk_\S+/)?.[0];
    assert.ok(ciKey && ciSecret, second.stdout);

    const revoke = await palai(['keys', 'revoke', ciKey]);
    assert.equal(revoke.code, 0, revoke.stderr);
    assert.match(revoke.stdout, new RegExp(`Revoked API key ${ciKey}`));

    const list = await palai(['keys', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.ok(!list.stdout.includes(firstSecret) && !list.stdout.includes(ciSecret), 'no secret in the list');
    const rows = list.stdout.trim().split('\n');
    assert.match(rows[0], /^ID\s+PROJECT\s+NAME\s+PREFIX\s+CREATED\s+REVOKED$/);
    assert.equal(rows.length, 3);
    const ciRow = rows.find((row) => row.startsWith(ciKey));
    const otherRow = rows.slice(1).find((row) => !row.startsWith(ciKey));
    assert.match(ciRow ?? '', /\d{4}-\d\d-\d\dT\S+Z$/, 'the revoked key shows when it was revoked');
    assert.match(otherRow ?? '', /\s-$/, 'the other key is active');
  });

  test('doctor passes on a migrated store with a project and an active key', async () => {
    const doctor = await palai(['doctor']);
    assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr);
    assert.doesNotMatch(doctor.stdout, /✗/);
    for (const check of [
      /✓ Node\.js/,
      /✓ configuration loads/,
      /✓ store: embedded store at /,
      /✓ PALAI_HOME .* is writable/,
      /✓ migrations applied/,
      /✓ 1 project\(s\), 1 active API key\(s\)/,
    ]) {
      assert.match(doctor.stdout, check);
    }
  });

  test('agents apply creates, then leaves unchanged, then updates after an edit', async () => {
    const example = join(ROOT, 'examples/agents/echo.yaml');
    const created = await palai(['agents', 'apply', '-f', example]);
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(created.stdout.trim().split('\n'), ['created echo (revision 1)', 'created storyteller (revision 1)']);

    const unchanged = await palai(['agents', 'apply', '-f', example]);
    assert.equal(unchanged.code, 0, unchanged.stderr);
    assert.deepEqual(unchanged.stdout.trim().split('\n'), ['unchanged echo (revision 1)', 'unchanged storyteller (revision 1)']);

    const edited = writeYaml('edited.yaml', '- name: echo\n  model: { provider: fake }\n  instructions: Answer twice.\n');
    const updated = await palai(['agents', 'apply', '-f', edited]);
    assert.equal(updated.code, 0, updated.stderr);
    assert.equal(updated.stdout.trim(), 'updated echo (revision 2)');
  });

  test('agents apply rejects a file with any invalid spec, names the JSON pointers and applies nothing', async () => {
    const invalid = writeYaml(
      'invalid.yaml',
      ['- name: fresh-agent', '  model: { provider: fake }', '- name: broken', '  model: { provider: no-such-provider }', '  temperature: 3', ''].join('\n'),
    );
    const result = await palai(['agents', 'apply', '-f', invalid]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /nothing was applied/);
    assert.match(result.stderr, /\/1\/model\/provider: /);
    assert.match(result.stderr, /\/1\/temperature: is not a known field/);
    noStack(result);
  });

  test('a store held by another process: serve exits 1 with one clean line, doctor reports it as information', async () => {
    const db = await PgliteDb.open(join(home, 'db'));
    try {
      // While holding the store, confirm the rejected file above left no trace.
      const [project] = await listProjects(db);
      const names = (await listAgents(db, project.id, { limit: 100 })).data.map((a) => a.name).sort();
      assert.deepEqual(names, ['echo', 'storyteller']);

      const serve = await palai(['serve', '--port', '0']);
      assert.equal(serve.code, 1);
      assert.match(serve.stderr, /^palai: The embedded store is open in process \d+/);
      assert.equal(serve.stderr.trim().split('\n').length, 1, serve.stderr);
      assert.doesNotMatch(serve.stdout, /listening/);

      const doctor = await palai(['doctor']);
      assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr);
      assert.match(doctor.stdout, /ℹ the embedded store is in use by another process/);
      noStack(doctor);
    } finally {
      await db.close();
    }
  });
  test('agents apply refuses a spec naming an unknown model connection and applies nothing; one without its provider key is applied with a warning doctor lists', async () => {
    const noKey = { OPENAI_API_KEY: '' };
    const unknown = writeYaml(
      'unknown-connection.yaml',
      ['- name: first-fine', '  model: { provider: fake }', '- name: lost', '  model: { connection: nowhere }', ''].join('\n'),
    );
    const refused = await palai(['agents', 'apply', '-f', unknown], noKey);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, '');
    assert.equal(
      refused.stderr,
      `palai: ${unknown} has invalid agent specs; nothing was applied:\n  /1/model/connection: names no model connection of this project (agent "lost")\n`,
    );

    const keyless = writeYaml('keyless.yaml', 'name: keyless\nmodel: { provider: openai, name: gpt-4.1-mini }\n');
    const missing = "OPENAI_API_KEY is not set, and the agent's model names no connection with a key.";
    const applied = await palai(['agents', 'apply', '-f', keyless], noKey);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.stdout, `created keyless (revision 1)\n  warning: /model: ${missing}\n`);

    const doctor = await palai(['doctor'], noKey);
    assert.equal(doctor.code, 1, doctor.stdout);
    assert.ok(doctor.stdout.includes(`✗ agent keyless (project proj_`), doctor.stdout);
    assert.match(doctor.stdout, new RegExp(`\\): ${missing.replace(/[.]/g, '\\.')}\n\\s+fix: set that key on every palai process`));
    assert.match(doctor.stdout, /✓ 2 agent\(s\) have what their model needs/, 'echo and storyteller');
    const serverKey = 'sk-test-doctor-key-0123456789';
    const withKey = await palai(['doctor'], { OPENAI_API_KEY: serverKey });
    assert.equal(withKey.code, 0, withKey.stdout);
    assert.match(withKey.stdout, /✓ 3 agent\(s\) have what their model needs/);
    assert.ok(!withKey.stdout.includes(serverKey) && !withKey.stderr.includes(serverKey), 'doctor never prints a key');
  });
});

describe('palai startup failures', { timeout: 120_000 }, () => {
  test('a bad setting or an unreachable database stops serve with one line, no stack and no password', async () => {
    const [badConfig, unreachable] = await Promise.all([
      palai(['serve'], { PALAI_LEASE_SECONDS: 'abc' }),
      palai(['serve', '--port', '0'], { PALAI_DATABASE_URL: 'postgres://palai:topsecret@127.0.0.1:1/palai' }),
    ]);
    assert.equal(badConfig.code, 1);
    assert.equal(badConfig.stderr, 'palai: Invalid configuration: PALAI_LEASE_SECONDS must be an integer ≥ 1, got "abc"\n');
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /^palai: Cannot reach the database \(PostgreSQL at postgres:\/\/palai:\*\*\*@127\.0\.0\.1:1\/palai\): /);
    assert.equal(unreachable.stderr.trim().split('\n').length, 1, unreachable.stderr);
    assert.ok(!unreachable.stdout.includes('topsecret') && !unreachable.stderr.includes('topsecret'));
  });

  test('an invalid log level, database URL or bind host stops serve, and every command that loads the configuration, with one line naming it', async () => {
    const invalid = 'palai: Invalid configuration: ';
    const cases: [string[], Record<string, string>, string][] = [
      [
        ['serve', '--port', '0'],
        { PALAI_LOG_LEVEL: 'loud' },
        `${invalid}PALAI_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"`,
      ],
      [
        ['serve', '--port', '0'],
        { PALAI_DATABASE_URL: 'notaurl' },
        `${invalid}PALAI_DATABASE_URL must be a postgres:// or postgresql:// URL (postgres://user:password@host:5432/database), got a value that is not a URL`,
      ],
      [
        ['serve', '--port', '0'],
        { PALAI_DATABASE_URL: 'mysql://palai:topsecret@db/palai' },
        `${invalid}PALAI_DATABASE_URL must be a postgres:// or postgresql:// URL (postgres://user:password@host:5432/database), got a mysql: URL`,
      ],
      [['serve', '--port', '0'], { HOST: 'http://0.0.0.0' }, `${invalid}HOST must be an IP address or a host name (the port is PORT), got "http://0.0.0.0"`],
      [['keys', 'list'], { PALAI_LOG_LEVEL: 'loud' }, `${invalid}PALAI_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"`],
      [
        ['outbox', 'list'],
        { PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1:8080' },
        `${invalid}PALAI_EGRESS_ALLOW_HOSTS entry "127.0.0.1:8080" must be a host name, an IP address or a CIDR block such as 10.1.0.0/16`,
      ],
    ];
    const results = await Promise.all(cases.map(([args, env]) => palai(args, env)));
    results.forEach((result, index) => {
      const [args, env, line] = cases[index];
      const what = `${args.join(' ')} with ${JSON.stringify(env)}`;
      assert.equal(result.code, 1, what);
      assert.equal(result.stderr, `${line}\n`, what);
      assert.equal(result.stdout, '', what);
      assert.ok(!result.stderr.includes('topsecret'), what);
    });
  });
});

const postgresReason = await postgresUnavailable();

describe('palai doctor and migrate on PostgreSQL', { skip: postgresReason ?? false, timeout: 120_000 }, () => {
  test('doctor fails on a database without migrations and says to run palai migrate; after it, to create a key; migrate is idempotent', async () => {
    const database = await freshPostgresDatabase();
    try {
      const env = { PALAI_DATABASE_URL: database.url };
      const before = await palai(['doctor'], env);
      assert.equal(before.code, 1);
      assert.match(before.stdout, /✓ database reachable/);
      assert.match(before.stdout, /✗ \d+ migration\(s\) not applied: 0001_\w+(, \d{4}_\w+)*\n\s+fix: run palai migrate/);

      const migrate = await palai(['migrate'], env);
      assert.equal(migrate.code, 0, migrate.stderr);
      const again = await palai(['migrate'], env);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /Up to date/);

      const [after, unknownKey] = await Promise.all([palai(['doctor'], env), palai(['keys', 'revoke', 'key_doesnotexist'], env)]);
      assert.equal(after.code, 1);
      assert.match(after.stdout, /✓ migrations applied/);
      assert.match(after.stdout, /✗ no project yet\n\s+fix: run palai keys create/);
      assert.equal(unknownKey.code, 1);
      assert.equal(unknownKey.stderr, 'palai: No API key "key_doesnotexist"; see palai keys list.\n');
    } finally {
      await database.drop();
    }
  });
});
