// The companion's ledger: a re-sent plan is answered from its record and never
// run again, another plan under the same key is a conflict, a command the
// companion died in is `unknown` after a restart (not run again), and every
// file it keeps is written whole or not at all.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { identityPath, ledgerDir, loadOrCreateIdentity, readState, writeState } from '../../adapters/nodes/companion/home.js';
import { Ledger, ledgerSummary } from '../../adapters/nodes/companion/ledger.js';
import { until } from '../support/until.js';
import { harness, makeNode, planFor, removeTempDirs } from './companion-support.js';

const leftovers: number[] = [];
after(() => {
  for (const group of leftovers) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  removeTempDirs();
});

const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : []);
const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').trim() : '');

test('a re-sent plan is answered from the record, never run again, even after a restart', async () => {
  const node = makeNode();
  const log = join(node.scopes.scratch, 'ran.log');
  const plan = planFor(node, 'shell.exec.v1', { script: `echo run >> ${log}; echo done` });
  const first = harness(node);
  await first.invocations.invoke(plan);
  await first.invocations.invoke(plan);
  const [original, replay] = first.results();
  assert.deepEqual(replay, original);
  assert.equal(original.result!.stdout, 'done\n');

  const restarted = harness(node);
  await restarted.invocations.invoke(plan);
  assert.deepEqual(restarted.frames, [original], 'the result alone: no second accepted');
  assert.deepEqual(lines(log), ['run']);
});

test('the same key with another plan hash is IDEMPOTENCY_CONFLICT, and nothing runs', async () => {
  const node = makeNode();
  const log = join(node.scopes.scratch, 'ran.log');
  const h = harness(node);
  const plan = planFor(node, 'shell.exec.v1', { script: `echo run >> ${log}` });
  await h.invocations.invoke(plan);
  const other = planFor(node, 'shell.exec.v1', { script: `echo again >> ${log}` }, { idempotency_key: plan.idempotency_key });
  await h.invocations.invoke(other);
  const conflict = h.results()[1];
  assert.equal(conflict.state, 'failed');
  assert.equal(conflict.plan_hash, other.plan_hash);
  assert.equal(conflict.failure!.code, 'IDEMPOTENCY_CONFLICT');
  assert.deepEqual(lines(log), ['run']);
  assert.equal(h.ledger.get(plan.idempotency_key)!.plan_hash, plan.plan_hash, 'the record is the first plan’s');
});

test('a companion SIGKILLed mid-command reports it unknown after restart, and the command ran once', async () => {
  const node = makeNode();
  const log = join(node.scopes.scratch, 'ran.log');
  const pidFile = join(node.scopes.scratch, 'group.pid');
  const plan = planFor(node, 'shell.exec.v1', { script: `echo $$ > ${pidFile}; echo run >> ${log}; sleep 30` });
  const planPath = join(node.scopes.scratch, 'plan.json');
  writeFileSync(planPath, JSON.stringify(plan));
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'companion-ledger-child.ts'), node.home, node.configPath, planPath], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const record = () => {
    const names = readdirSync(ledgerDir(node.home)).filter((n) => n.endsWith('.json'));
    return names.length === 1 ? JSON.parse(readFileSync(join(ledgerDir(node.home), names[0]), 'utf8')) : null;
  };
  await until('the command is running', () => out.includes('invoke.accepted') && lines(log).length === 1 && read(pidFile) && record()?.pid);
  leftovers.push(Number(read(pidFile)));
  child.kill('SIGKILL');
  await exited;
  const left = record();
  assert.equal(left.state, 'running');
  assert.equal(left.pid, Number(read(pidFile)), 'the record names the process group it left');

  const restarted = harness(node);
  assert.equal(restarted.ledger.get(plan.idempotency_key)!.state, 'unknown');
  await restarted.invocations.invoke(plan);
  assert.deepEqual(restarted.frames, [
    {
      type: 'invoke.result',
      invocation_id: plan.invocation_id,
      plan_hash: plan.plan_hash,
      state: 'unknown',
      failure: { code: 'INVOCATION_UNKNOWN', message: 'the companion stopped while the command ran; its outcome is unknown and it is not run again' },
    },
  ]);
  assert.deepEqual(lines(log), ['run']);
  assert.deepEqual(ledgerSummary(restarted.ledger.all()).byState, { unknown: 1 });
});

test("the home's files are whole or absent: no temporary file stays, each record parses, keys and records are 0600", async () => {
  const node = makeNode();
  const h = harness(node);
  for (let i = 0; i < 3; i++) await h.invocations.invoke(planFor(node, 'shell.exec.v1', { script: `echo ${i}` }));
  const dir = ledgerDir(node.home);
  writeFileSync(join(dir, 'abc.json.123.tmp'), '{"torn'); // what a crash mid-write leaves
  const reopened = Ledger.open(dir);
  assert.equal(reopened.all().length, 3);
  const names = readdirSync(dir);
  assert.equal(names.length, 3);
  for (const name of names) {
    assert.match(name, /^[0-9a-f]{64}\.json$/);
    assert.equal(statSync(join(dir, name)).mode & 0o777, 0o600);
    assert.equal(JSON.parse(readFileSync(join(dir, name), 'utf8')).state, 'succeeded');
  }
  assert.equal(statSync(identityPath(node.home)).mode & 0o777, 0o600);
  assert.equal(loadOrCreateIdentity(node.home).nodeId, node.identity.nodeId, 'the identity is kept');

  writeState(node.home, { hub: 'ws://hub/v1/nodes/connect', paired: true, last_admission: null });
  assert.deepEqual(readState(node.home), { hub: 'ws://hub/v1/nodes/connect', paired: true, last_admission: null });
  assert.deepEqual(
    readdirSync(node.home).filter((n) => n.endsWith('.tmp')),
    [],
  );
});

test('the ledger is bounded: ended records past the retention, then the oldest past 256 records or the byte bound, go; open ones never', () => {
  const node = makeNode();
  const dir = ledgerDir(node.home);
  const start = Date.parse('2026-12-01T00:00:00Z');
  const plan = (n: number) => ({
    ...planFor(node, 'shell.exec.v1', { script: `echo ${n}` }),
    idempotency_key: `resp_bound:call_${n}`,
    invocation_id: `ninv_${n}`,
  });
  const ledger = Ledger.open(dir, start);
  ledger.begin(plan(0), new Date(start));
  for (let n = 1; n <= 300; n++) {
    ledger.begin(plan(n), new Date(start + n * 1000));
    ledger.finish(
      `resp_bound:call_${n}`,
      { state: 'succeeded', result: { exit_code: 0, stdout: `${n}\n`, stderr: '', truncated: false } },
      new Date(start + n * 1000),
    );
  }
  const kept = ledger.all();
  assert.equal(kept.length, 256);
  assert.ok(ledger.get('resp_bound:call_0'), 'the open record stays');
  assert.equal(ledger.get('resp_bound:call_45'), undefined, 'the oldest ended ones went');
  assert.ok(ledger.get('resp_bound:call_300'));
  assert.equal(readdirSync(dir).filter((name) => name.endsWith('.json')).length, 256, 'their files went with them');

  // Reopened a week and a day later: every ended record is past the retention; the open one becomes unknown and stays.
  const later = Ledger.open(dir, start + 8 * 24 * 3600_000);
  assert.deepEqual(
    later.all().map((r) => [r.idempotency_key, r.state]),
    [['resp_bound:call_0', 'unknown']],
  );

  // A small byte bound keeps only what fits.
  const small = Ledger.open(dir, start + 8 * 24 * 3600_000, { maxBytes: 4096 });
  for (let n = 400; n < 420; n++) {
    small.begin(plan(n));
    small.finish(`resp_bound:call_${n}`, { state: 'succeeded', result: { exit_code: 0, stdout: 'x'.repeat(1000), stderr: '', truncated: false } });
  }
  const bytes = readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
  assert.ok(bytes <= 4096, `${bytes} bytes on disk`);
  assert.ok(small.get('resp_bound:call_419'), 'the newest stays');
});
