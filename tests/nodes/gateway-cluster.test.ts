// Two `palai serve` processes on one PostgreSQL: a node connected to the one
// that dispatched its plan loses it to SIGKILL mid-command, reconnects to the
// other, which takes the node's lease once the dead one's runs out and sends
// the same plan again; the result lands in the ledger once. The plan is
// prepared by a third hub in this process (the tool provider's place), so the
// work signal crosses processes as in production.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startHub as startInProcessHub, type Hub } from '../../cli/hub.js';
import { createLogger } from '../../core/logger.js';
import { catalogHash } from '../../core/surfaces/nodes/wire/catalog.js';
import { NODE_CLOSE } from '../../core/surfaces/nodes/wire/close-codes.js';
import { api, baseOf, kill9, useCluster } from '../e2e/cluster.js';
import { testConfig, withSlice } from '../support/hub.js';
import { postgresUnavailable } from '../support/stores.js';
import { until } from '../support/until.js';
import { execCatalog, newIdentity, proofFor, type TestIdentity } from './node-fixtures.js';
import { RawNode } from './raw-node.js';

const skip = await postgresUnavailable();
const connectUrl = (base: string) => `${base.replace(/^http/, 'ws')}/v1/nodes/connect`;

async function admit(url: string, identity: TestIdentity, token?: string) {
  const { node, challenge } = await RawNode.challenged(url);
  node.send({ type: 'hello', proof: proofFor(identity, { nonce: challenge.nonce }), ...(token ? { enrollment_token: token } : {}) });
  return { node, admitted: await node.next('admitted') };
}

describe('the nodes gateway across hub processes', { skip: skip ?? false }, () => {
  const cluster = useCluster();
  let preparer: Hub | null = null;
  before(async () => {
    const env = cluster.env();
    preparer = await startInProcessHub({
      config: testConfig({ databaseUrl: env.PALAI_DATABASE_URL as string }),
      role: 'worker',
      logger: createLogger('silent'),
    });
  });
  after(async () => {
    await preparer?.close();
  });

  it('a plan sent by a hub SIGKILLed mid-command is sent again by the hub the node reconnects to, and finishes once', async () => {
    const first = await cluster.start('hub-a', 'api');
    const second = await cluster.start('hub-b', 'api');
    const enrolled = await api(baseOf(first), 'POST', '/v1/node_enrollments', {});
    assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
    const identity = newIdentity();
    const { node, admitted } = await admit(connectUrl(baseOf(first)), identity, enrolled.body.token);
    assert.equal(admitted.state, 'pending_pairing');
    // Approved through the other process: the signal reaches the holder.
    const approved = await api(baseOf(second), 'POST', `/v1/nodes/${identity.nodeId}/approve`, { allowed_commands: ['shell.exec.v1'] });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal((await node.next('approved')).approved_catalog_hash, catalogHash(execCatalog()));

    const nodes = withSlice(preparer as Hub, 'nodes');
    const { rows } = await (preparer as Hub).kernel.db.query<{ project_id: string }>('SELECT project_id FROM nodes WHERE id = $1', [identity.nodeId]);
    const prepared = await nodes.nodeCalls.prepare(rows[0].project_id, {
      responseId: 'resp_cluster_gateway',
      callId: 'call_1',
      nodeId: identity.nodeId,
      command: 'shell.exec.v1',
      input: { script: 'echo run >> ran.log; sleep 3; echo done' },
    });
    const { plan } = await node.next('invoke');
    assert.equal(plan.invocation_id, prepared.invocationId);
    node.send({ type: 'invoke.accepted', invocation_id: plan.invocation_id });
    await until('the invocation runs', async () => (await api(baseOf(second), 'GET', `/v1/node_invocations/${plan.invocation_id}`)).body.state === 'running');

    await kill9(first);
    assert.notEqual((await node.closed).code, NODE_CLOSE.goingAway);
    const again = await admit(connectUrl(baseOf(second)), identity);
    assert.equal(again.admitted.node_id, identity.nodeId);
    const resent = await again.node.next('invoke');
    assert.deepEqual(resent.plan, plan);
    again.node.send({
      type: 'invoke.result',
      invocation_id: plan.invocation_id,
      plan_hash: plan.plan_hash,
      state: 'succeeded',
      result: { exit_code: 0, stdout: 'done\n', stderr: '', truncated: false },
    });
    await until(
      'the invocation succeeded',
      async () => (await api(baseOf(second), 'GET', `/v1/node_invocations/${plan.invocation_id}`)).body.state === 'succeeded',
    );
    const node2 = await api(baseOf(second), 'GET', `/v1/nodes/${identity.nodeId}`);
    assert.equal(node2.body.state, 'connected');
    await again.node.close();
  });
});
