// deploy/compose/compose.yaml: valid under the Compose Specification's schema
// (vendored, so the check runs offline), every Palai service starts only after
// the one-shot migration succeeded, every long-running service has a health
// check, and no secret is written in the file: secrets come from env files,
// of which only templates are committed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../core/config.js';
import { configVariables, envFile, exists, read, ROOT, SECRET_NAME, toolMissing, yamlFile } from './support/files.js';
import { composeValidator, explain } from './support/schemas.js';

const DIR = 'deploy/compose';
const compose = yamlFile(`${DIR}/compose.yaml`);
const services: Record<string, any> = compose.services;
const PALAI_ROLES = {
  migrate: ['migrate'],
  api: ['serve', '--role', 'api'],
  worker: ['serve', '--role', 'worker'],
  consumers: ['serve', '--role', 'consumers'],
};
const isPalai = (service: any) => service.build?.dockerfile === 'deploy/Dockerfile';

/** A service's environment as a map, whichever of Compose's two forms it uses. */
function environment(service: any): Record<string, string> {
  const env = service.environment ?? {};
  if (!Array.isArray(env)) return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
  return Object.fromEntries(env.map((entry: string) => [entry.split('=')[0], entry.slice(entry.indexOf('=') + 1)]));
}

const envFiles = (service: any): string[] => [service.env_file ?? []].flat().map((e: any) => (typeof e === 'string' ? e : e.path));

test('compose.yaml is valid under the Compose Specification schema', () => {
  const validate = composeValidator();
  assert.ok(validate(compose), `compose.yaml does not match the Compose Specification:\n${explain(validate.errors)}`);
});

test('it runs the API, a worker and the consumers from the Palai image, with PostgreSQL, Kafka (KRaft) and an SQS server', () => {
  for (const [name, command] of Object.entries(PALAI_ROLES)) {
    assert.ok(isPalai(services[name]), `${name} is built from deploy/Dockerfile`);
    assert.deepEqual(services[name].command, command, `${name} runs palai ${command.join(' ')}`);
  }
  assert.match(services.postgres.image, /^postgres:1[5-9]\b/);
  assert.match(services.kafka.image, /^apache\/kafka:4\./);
  assert.equal(environment(services.kafka).KAFKA_PROCESS_ROLES, 'broker,controller', 'Kafka in KRaft mode, without ZooKeeper');
  assert.match(services.sqs.image, /^softwaremill\/elasticmq-native:/);
  assert.ok(exists(`${DIR}/elasticmq.conf`));
});

test('every Palai service waits for the migration to complete, and the migration for a healthy PostgreSQL', () => {
  assert.equal(services.migrate.restart, 'no', 'the migration runs once');
  assert.equal(services.migrate.depends_on.postgres.condition, 'service_healthy');
  for (const name of Object.keys(PALAI_ROLES).filter((n) => n !== 'migrate')) {
    assert.equal(services[name].depends_on?.migrate?.condition, 'service_completed_successfully', `${name} waits for migrate`);
  }
  for (const [name, service] of Object.entries(services)) {
    for (const dependency of Object.keys(service.depends_on ?? {})) assert.ok(services[dependency], `${name} depends on a service that exists: ${dependency}`);
  }
});

test('every long-running service has a health check; Palai services probe /readyz on the admin port', () => {
  for (const [name, service] of Object.entries(services)) {
    if (name === 'migrate') continue;
    const check = service.healthcheck;
    assert.ok(check && !check.disable && Array.isArray(check.test) && check.test.length > 1, `${name} has a health check`);
    if (!isPalai(service)) continue;
    const adminPort = environment(service).PALAI_ADMIN_PORT;
    assert.ok(check.test.join(' ').includes(`127.0.0.1:${adminPort}/readyz`), `${name} probes /readyz on PALAI_ADMIN_PORT (${adminPort})`);
    const published = (service.ports ?? []).map(String);
    assert.ok(
      published.some((p: string) => p.endsWith(`:${adminPort}`)),
      `${name} publishes its admin port`,
    );
  }
  assert.match(services.postgres.healthcheck.test.join(' '), /pg_isready/);
});

test('no secret value is written in compose.yaml: secrets come from env files whose templates are committed and whose filled-in copies are ignored', () => {
  for (const [name, service] of Object.entries(services)) {
    for (const [key, value] of Object.entries(environment(service))) {
      if (SECRET_NAME.test(key)) assert.fail(`${name} sets ${key} in compose.yaml (value ${value.length} characters); it belongs in an env file`);
    }
  }
  assert.doesNotMatch(read(`${DIR}/compose.yaml`), /postgres(ql)?:\/\/[^@\s]*:[^@\s]*@/, 'no database URL with a password');
  const referenced = new Set(Object.values(services).flatMap(envFiles));
  assert.ok(referenced.has('palai.env') && referenced.has('postgres.env'));
  for (const file of referenced) {
    assert.ok(exists(`${DIR}/${file}.example`), `${file}.example is the template of ${file}`);
    assert.ok(!exists(`${DIR}/${file}`) || !gitTracks(`${DIR}/${file}`), `${file} is not committed`);
  }
  assert.match(read(`${DIR}/.gitignore`), /^\*\.env$/m, 'the filled-in env files are ignored');
  for (const name of Object.keys(PALAI_ROLES)) assert.deepEqual(envFiles(services[name]), ['palai.env'], `${name} reads palai.env`);
});

test('the settings given to Palai are ones its configuration loader reads and accepts', () => {
  const known = configVariables();
  const template = envFile(`${DIR}/palai.env.example`);
  for (const name of Object.keys(PALAI_ROLES)) {
    const env = { ...template, ...environment(services[name]) };
    for (const key of Object.keys(env).filter((k) => k.startsWith('PALAI_') || k === 'HOST' || k === 'PORT'))
      assert.ok(known.has(key), `${key} is a setting core/config.ts reads`);
    const config = loadConfig(env);
    assert.equal(config.host, '0.0.0.0');
    assert.notEqual(config.adminPort, null);
  }
  const database = new URL(template.PALAI_DATABASE_URL);
  const postgres = envFile(`${DIR}/postgres.env.example`);
  assert.equal(database.hostname, 'postgres', 'PALAI_DATABASE_URL names the postgres service');
  assert.equal(database.username, postgres.POSTGRES_USER);
  assert.equal(database.pathname, `/${postgres.POSTGRES_DB}`);
  for (const broker of ['kafka', 'sqs'])
    assert.ok(environment(services.consumers).PALAI_EGRESS_ALLOW_HOSTS.split(',').includes(broker), `the egress guard lets Palai reach ${broker}`);
});

// A Compose CLI parses the file without an engine (.ci/run installs Debian's docker-compose); it has the last word.
const composeCli = ['docker compose', 'docker-compose'].find((cli) => {
  const [command, ...args] = cli.split(' ');
  return spawnSync(command, [...args, 'version'], { stdio: 'ignore' }).status === 0;
});

test(
  'a Compose CLI parses it (`config`), with env files made from the templates',
  { skip: toolMissing('docker compose or docker-compose', Boolean(composeCli)) },
  () => {
    const work = mkdtempSync(join(tmpdir(), 'palai-compose-'));
    try {
      cpSync(join(ROOT, DIR), join(work, DIR), { recursive: true });
      for (const file of ['palai.env', 'postgres.env']) cpSync(join(work, DIR, `${file}.example`), join(work, DIR, file));
      const [command, ...args] = composeCli!.split(' ');
      const result = spawnSync(command, [...args, '-f', 'compose.yaml', 'config', '--quiet'], { cwd: join(work, DIR), encoding: 'utf8' });
      assert.equal(result.status, 0, `${composeCli} config failed:\n${result.stderr}`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
);

function gitTracks(path: string): boolean {
  return spawnSync('git', ['ls-files', '--error-unmatch', path], { cwd: ROOT, stdio: 'ignore' }).status === 0;
}
