// The companion runs what its plan and its policy allow, in real child
// processes: exit codes, stdout and stderr, truncation, timeouts, cancels that
// take the whole process group, and every refusal answered with nothing run.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ledgerDir } from '../../adapters/nodes/companion/home.js';
import { until } from '../support/until.js';
import { gone, harness, makeNode, planFor, removeTempDirs } from './companion-support.js';

after(removeTempDirs);

test('a command runs in its scope: accepted, then its exit code, stdout and stderr (a non-zero exit is a result)', async () => {
  const node = makeNode();
  const h = harness(node);
  const plan = planFor(node, 'shell.exec.v1', { script: 'pwd; echo oops >&2; exit 3', working_scope: 'scratch' });
  await h.invocations.invoke(plan);
  assert.deepEqual(h.frames[0], { type: 'invoke.accepted', invocation_id: plan.invocation_id });
  const [result] = h.results();
  assert.equal(result.state, 'failed');
  assert.equal(result.plan_hash, plan.plan_hash);
  assert.equal(result.failure, undefined);
  assert.deepEqual(result.result, { exit_code: 3, signal: null, timed_out: false, stdout: `${node.scopes.scratch}\n`, stderr: 'oops\n', truncated: false });
});

test('without a scope the first one is used; exit 0 succeeds', async () => {
  const node = makeNode();
  const h = harness(node);
  await h.invocations.invoke(planFor(node, 'shell.exec.v1', { script: 'pwd' }));
  assert.equal(h.results()[0].state, 'succeeded');
  assert.equal(h.results()[0].result!.stdout, `${node.scopes.repo}\n`);
});

test('system.exec runs an executable by alias with its arguments, no shell', async () => {
  const node = makeNode();
  const h = harness(node);
  await h.invocations.invoke(planFor(node, 'system.exec.v1', { executable: 'echo', args: ['$HOME', 'a b'] }));
  assert.equal(h.results()[0].result!.stdout, '$HOME a b\n');
});

test("the environment is a minimal base plus the allowed names: none of the companion's other variables", async () => {
  const node = makeNode();
  const h = harness(node);
  process.env.PALAI_TEST_SECRET = 'hunter2';
  try {
    await h.invocations.invoke(planFor(node, 'shell.exec.v1', { script: 'echo "$CI:${PALAI_TEST_SECRET:-unset}:${PATH:+path}"', env: { CI: 'yes' } }));
  } finally {
    delete process.env.PALAI_TEST_SECRET;
  }
  assert.equal(h.results()[0].result!.stdout, 'yes:unset:path\n');
});

test('output past the limit is dropped and flagged', async () => {
  const node = makeNode();
  const h = harness(node);
  await h.invocations.invoke(planFor(node, 'shell.exec.v1', { script: "head -c 5000 /dev/zero | tr '\\0' a; echo tail >&2" }, { output_limit_bytes: 100 }));
  const { result } = h.results()[0];
  assert.equal(result!.stdout.length + result!.stderr.length, 100);
  assert.equal(result!.truncated, true);
  assert.equal(result!.exit_code, 0);
});

test('a timeout stops the command: no exit code, the signal, timed_out', async () => {
  const node = makeNode();
  const h = harness(node);
  await h.invocations.invoke(planFor(node, 'shell.exec.v1', { script: 'echo started; sleep 30', timeout_seconds: 1 }));
  const [result] = h.results();
  assert.equal(result.state, 'failed');
  assert.equal(result.result!.timed_out, true);
  assert.equal(result.result!.exit_code, null);
  assert.equal(result.result!.stdout, 'started\n');
});

test('a cancel takes the whole process group, KILL after the grace when TERM is ignored, and says it was confirmed', async () => {
  const node = makeNode({ grace: 1 });
  const h = harness(node);
  const pidFile = join(node.scopes.scratch, 'child.pid');
  const plan = planFor(node, 'shell.exec.v1', { script: `trap '' TERM; sleep 30 & echo $! > ${pidFile}; wait`, working_scope: 'scratch' });
  const running = h.invocations.invoke(plan);
  const childPid = Number(await until('the background child started', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim()));
  assert.equal(gone(childPid), false);
  await h.invocations.cancel(plan.invocation_id);
  await running;
  assert.equal(gone(childPid), true);
  const [result] = h.results();
  assert.equal(result.state, 'canceled');
  assert.equal(result.termination_confirmed, true);
  assert.equal(result.failure!.code, 'INVOCATION_CANCELED');
  assert.equal(h.ledger.get(plan.idempotency_key)!.state, 'canceled');
});

test('a cancel for a plan not seen yet makes the plan, when it comes, refused as cancelled and never run', async () => {
  const node = makeNode();
  const h = harness(node);
  const marker = join(node.scopes.scratch, 'ran');
  const plan = planFor(node, 'shell.exec.v1', { script: `touch ${marker}`, working_scope: 'scratch' });
  await h.invocations.cancel(plan.invocation_id);
  assert.deepEqual(h.results(), [], 'nothing to answer for an invocation never seen');
  await h.invocations.invoke(plan);
  const [result] = h.results();
  assert.equal(result.state, 'canceled');
  assert.equal(result.plan_hash, plan.plan_hash);
  assert.equal(result.failure!.code, 'INVOCATION_CANCELED');
  assert.equal(existsSync(marker), false, 'not run');
  assert.equal(h.ledger.get(plan.idempotency_key), undefined, 'nothing recorded: a re-send comes after its cancel again');
});

/** Refusals: the answer, no ledger record, the marker file never made. */
async function refused(
  make: (node: ReturnType<typeof makeNode>, marker: string) => Parameters<ReturnType<typeof harness>['invocations']['invoke']>[0],
  options: { approved?: string[]; now?: () => number; allowed?: string } = {},
) {
  const node = makeNode(options.allowed ? { allowed: options.allowed } : {});
  const h = harness(node, options);
  const marker = join(node.scopes.scratch, 'ran');
  const plan = make(node, marker);
  await h.invocations.invoke(plan);
  assert.equal(h.frames.length, 1, 'only a result, no accepted');
  const [result] = h.results();
  assert.equal(result.state, 'failed');
  assert.equal(result.invocation_id, plan.invocation_id);
  assert.equal(result.result, undefined);
  assert.equal(existsSync(marker), false, 'nothing ran');
  assert.deepEqual(readdirSync(ledgerDir(node.home)), [], 'nothing recorded');
  assert.ok(result.failure!.message.length <= 512);
  for (const path of [node.scopes.repo, node.scopes.scratch, '/bin/echo', '/bin/bash']) assert.ok(!result.failure!.message.includes(path));
  return result.failure!;
}

test('a multi-byte script over 64 KiB in bytes (under 64 Ki characters) is refused', async () => {
  const failure = await refused((node, marker) => planFor(node, 'shell.exec.v1', { script: `touch ${marker} #${'é'.repeat(33_000)}` }));
  assert.deepEqual(failure, { code: 'INVALID_PLAN', message: 'the script is over 65536 bytes' });
});

test('a raw path as the working scope, or as the executable, is refused', async () => {
  const scope = await refused((node, marker) => planFor(node, 'shell.exec.v1', { script: `touch ${marker}`, working_scope: node.scopes.scratch }));
  assert.equal(scope.code, 'COMMAND_DENIED');
  assert.equal(scope.message, "the working scope is not one of the node's (one of: repo, scratch)");
  const executable = await refused((node) => planFor(node, 'system.exec.v1', { executable: '/bin/touch', args: ['x'] }));
  assert.equal(executable.code, 'COMMAND_DENIED');
});

test('an environment name the node does not allow is refused', async () => {
  const failure = await refused((node, marker) => planFor(node, 'shell.exec.v1', { script: `touch ${marker}`, env: { LD_PRELOAD: '/tmp/x.so' } }));
  assert.equal(failure.code, 'COMMAND_DENIED');
  assert.ok(!failure.message.includes('/tmp/x.so'));
});

test('a plan altered in transit is INVALID_PLAN', async () => {
  const failure = await refused((node, marker) => {
    const plan = planFor(node, 'shell.exec.v1', { script: 'echo harmless' });
    return { ...plan, input: { script: `touch ${marker}` } };
  });
  assert.deepEqual(failure, { code: 'INVALID_PLAN', message: 'the plan hash does not match the plan' });
});

test('hub and node clocks 60 s apart are INVALID_PLAN, either way', async () => {
  const behind = await refused((node, marker) => planFor(node, 'shell.exec.v1', { script: `touch ${marker}` }), { now: () => Date.now() - 60_000 });
  assert.equal(behind.code, 'INVALID_PLAN');
  const expired = await refused((node, marker) =>
    planFor(
      node,
      'shell.exec.v1',
      { script: `touch ${marker}` },
      { prepared_at: new Date(Date.now() - 400_000).toISOString(), expires_at: new Date(Date.now() - 60_000).toISOString() },
    ),
  );
  assert.deepEqual(expired, { code: 'INVALID_PLAN', message: 'the plan expired' });
});

test('a plan for another node or another catalog is INVALID_PLAN', async () => {
  const other = makeNode();
  const wrongNode = await refused((node, marker) => planFor(node, 'shell.exec.v1', { script: `touch ${marker}` }, { node_id: other.identity.nodeId }));
  assert.equal(wrongNode.code, 'INVALID_PLAN');
  const wrongCatalog = await refused((node, marker) =>
    planFor(node, 'shell.exec.v1', { script: `touch ${marker}` }, { catalog_hash: `sha256:${'1'.repeat(64)}` }),
  );
  assert.equal(wrongCatalog.code, 'INVALID_PLAN');
});

test('empty allowed commands deny everything, including what the hub approved; an unapproved command is denied', async () => {
  const local = await refused((node, marker) => planFor(node, 'shell.exec.v1', { script: `touch ${marker}` }), { allowed: '[]' });
  assert.equal(local.code, 'COMMAND_DENIED');
  const hub = await refused((node, marker) => planFor(node, 'shell.exec.v1', { script: `touch ${marker}` }), { approved: ['system.exec.v1'] });
  assert.equal(hub.code, 'COMMAND_DENIED');
});

test('input that does not fit the command, or a timeout over the node maximum, is refused', async () => {
  const shape = await refused((node, marker) => planFor(node, 'shell.exec.v1', { script: `touch ${marker}`, extra: true }));
  assert.equal(shape.code, 'INVALID_PLAN');
  const timeout = await refused((node, marker) => planFor(node, 'shell.exec.v1', { script: `touch ${marker}`, timeout_seconds: 3600 }));
  assert.equal(timeout.code, 'COMMAND_DENIED');
});

test('a command that cannot start is EXECUTION_FAILED, recorded, and the message names no path', async () => {
  const node = makeNode();
  node.config.shell.executables.set('echo', join(node.scopes.scratch, 'no-such-program'));
  const h = harness(node);
  const plan = planFor(node, 'system.exec.v1', { executable: 'echo' });
  await h.invocations.invoke(plan);
  const [result] = h.results();
  assert.equal(result.state, 'failed');
  assert.deepEqual(result.failure, { code: 'EXECUTION_FAILED', message: 'the command could not start (ENOENT)' });
  assert.equal(h.ledger.get(plan.idempotency_key)!.state, 'failed');

  node.config.shell.workingScopes.set('scratch', join(node.scopes.scratch, 'gone'));
  await h.invocations.invoke(planFor(node, 'shell.exec.v1', { script: 'true', working_scope: 'scratch' }));
  assert.deepEqual(h.results()[1].failure, { code: 'EXECUTION_FAILED', message: "the working scope's directory does not exist on the node" });
});
