// `palai node run` against a spawned `palai serve` on PostgreSQL, as an operator
// runs both: enrolled with a token from the REST API, pending while connected,
// approved without a restart, back after the hub process was SIGKILLed and
// started again, and ending with exit 1 once revoked.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cleanUpProcesses, startPalai, tempDir, userEnv, type Running } from '../support/cli.js';
import { postgresUnavailable } from '../support/stores.js';
import { until } from '../support/until.js';
import { api, baseOf, kill9, startHub, stopHub, useCluster, type HubProcess } from '../e2e/cluster.js';

const unavailable = await postgresUnavailable();
/** The suite's PostgreSQL database, made before the test and dropped after it. */
const cluster = unavailable ? null : useCluster();
after(cleanUpProcesses);

test('palai node run against palai serve: enroll, pending, approve, the hub SIGKILLed and back, revoked', { skip: unavailable ?? false }, async (t) => {
  let hub: HubProcess = await startHub('hub', 'all', cluster!.env());
  const base = baseOf(hub);
  t.after(() => stopHub(hub).catch(() => hub.proc.child.kill('SIGKILL')));

  const dir = tempDir('palai-node-serve-');
  mkdirSync(join(dir, 'repo'));
  const config = join(dir, 'palai-node.yaml');
  writeFileSync(config, `policy: { allowed_commands: [shell.exec.v1], maximum_risk: privileged }\nshell: { working_scopes: { repo: ${join(dir, 'repo')} } }\n`);
  const enrolled = await api(base, 'POST', '/v1/node_enrollments', { name: 'laptop' });
  assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
  const hubUrl = `${base.replace(/^http/u, 'ws')}/v1/nodes/connect`;
  const node: Running = startPalai(
    ['node', 'run', '--hub', hubUrl, '--config', config, '--home', join(dir, 'home'), '--token', enrolled.body.token],
    userEnv(),
  );
  const says = (text: string, from = 0) => until(`the companion says ${text}`, () => node.stderr().slice(from).includes(text));

  await says('is pending approval');
  const nodeId = /node (node_[0-9a-z]{26}):/u.exec(node.stderr())![1];
  assert.equal((await api(base, 'GET', `/v1/nodes/${nodeId}`)).body.state, 'pending_pairing');
  const approved = await api(base, 'POST', `/v1/nodes/${nodeId}/approve`, { aliases: ['laptop'], allowed_commands: ['shell.exec.v1'] });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  await says('paired: approved commands shell.exec.v1');
  await until('connected', async () => (await api(base, 'GET', '/v1/nodes/laptop')).body.state === 'connected');

  const mark = node.stderr().length;
  await kill9(hub);
  hub = await startHub('hub again', 'all', cluster!.env(), Number(new URL(base).port));
  await says('reconnecting in', mark);
  await says('admitted as', mark);
  await until('connected again', async () => (await api(base, 'GET', '/v1/nodes/laptop')).body.state === 'connected');

  const revoked = await api(base, 'POST', `/v1/nodes/${nodeId}/revoke`, { reason: 'lost laptop' });
  assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
  assert.equal(await node.exited, 1, node.stderr());
  assert.match(node.stderr(), /the hub refused this node for good \(4403.*\): the hub revoked or denied this node/);
  assert.ok(!node.stderr().includes(enrolled.body.token), 'the token is never logged');
});
