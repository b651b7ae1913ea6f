// A node's connection once admitted, against a real hub on both stores: the
// operator's approval reaches it as an `approved` frame, a prepared plan is
// sent as `invoke` and its result lands in the ledger, a reconnect re-sends
// what was not finished, a cancel is sent on, a newer connection supersedes
// the older one (in this process and in another), and a shutdown closes 1001.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { nodeConnectionLease } from '../../core/surfaces/nodes/node-gateway-port.js';
import { catalogHash } from '../../core/surfaces/nodes/wire/catalog.js';
import { NODE_CLOSE } from '../../core/surfaces/nodes/wire/close-codes.js';
import { planFault } from '../../core/surfaces/nodes/wire/execution-plan.js';
import { until } from '../support/until.js';
import { describeGateway, RawNode, type GatewayHub } from './gateway-hub.js';
import { execCatalog, newIdentity, proofFor, type TestIdentity } from './node-fixtures.js';

/** Connects the identity (with a token when given) and reads its `admitted` frame. */
async function admit(url: string, identity: TestIdentity, token?: string) {
  const { node, challenge } = await RawNode.challenged(url);
  node.send({ type: 'hello', proof: proofFor(identity, { nonce: challenge.nonce }), ...(token ? { enrollment_token: token } : {}) });
  return { node, admitted: await node.next('admitted') };
}

/** A paired node whose connection this gateway holds. */
async function pairedNode(hub: GatewayHub) {
  const identity = newIdentity();
  const { node } = await admit(hub.url, identity, await hub.token());
  const approved = await hub.http
    .post(`/v1/nodes/${identity.nodeId}/approve`)
    .set(hub.auth)
    .send({ allowed_commands: ['shell.exec.v1'] });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  await node.next('approved');
  await until('the gateway holds the node', () => hub.gateway.server.held().includes(identity.nodeId));
  return { identity, node };
}

const prepare = (hub: GatewayHub, nodeId: string, script = 'echo hi') =>
  hub.api.nodeCalls.prepare(hub.projectId, {
    responseId: `resp_${randomUUID().replaceAll('-', '')}`,
    callId: 'call_1',
    nodeId,
    command: 'shell.exec.v1',
    input: { script },
  });

await describeGateway('gateway dispatch', (ctx) => {
  it('sends the approval as an `approved` frame while the node stays connected', async () => {
    const hub = ctx();
    const identity = newIdentity();
    const { node, admitted } = await admit(hub.url, identity, await hub.token());
    assert.equal(admitted.state, 'pending_pairing');
    await hub.http
      .post(`/v1/nodes/${identity.nodeId}/approve`)
      .set(hub.auth)
      .send({ allowed_commands: ['shell.exec.v1'] })
      .expect(200);
    const approved = await node.next('approved');
    assert.deepEqual(approved.allowed_commands, ['shell.exec.v1']);
    assert.equal(approved.approved_catalog_hash, catalogHash(execCatalog()));
    await node.close();
  });

  it('records the connection and its end', async () => {
    const hub = ctx();
    const { identity, node } = await pairedNode(hub);
    await until('the node shows connected', async () => (await hub.api.nodes.get(hub.projectId, identity.nodeId)).state === 'connected');
    node.send({ type: 'heartbeat' });
    await node.close();
    await until('the node shows disconnected', async () => (await hub.api.nodes.get(hub.projectId, identity.nodeId)).state === 'disconnected');
  });

  it('sends a prepared plan as `invoke` and records its result, stored without NUL bytes', async () => {
    const hub = ctx();
    const { identity, node } = await pairedNode(hub);
    const prepared = await prepare(hub, identity.nodeId);
    const { plan } = await node.next('invoke');
    assert.equal(plan.invocation_id, prepared.invocationId);
    assert.equal(plan.plan_hash, prepared.planHash);
    assert.equal(planFault(plan, { nodeId: identity.nodeId, catalogHash: catalogHash(execCatalog()) }), null);
    node.send({ type: 'invoke.accepted', invocation_id: plan.invocation_id });
    await until('the invocation runs', async () => (await hub.api.nodeInvocations.get(hub.projectId, plan.invocation_id)).state === 'running');
    node.send({
      type: 'invoke.result',
      invocation_id: plan.invocation_id,
      plan_hash: plan.plan_hash,
      state: 'succeeded',
      result: { exit_code: 0, stdout: 'hi\u0000there\n', stderr: '', truncated: false },
    });
    await until('the invocation succeeded', async () => (await hub.api.nodeInvocations.get(hub.projectId, plan.invocation_id)).state === 'succeeded');
    const output = await hub.api.nodeCalls.outcome(plan.invocation_id);
    assert.ok(output !== null);
    assert.equal(JSON.parse(output).stdout, 'hi\ufffdthere\n');
    await node.close();
  });

  it('ignores a result whose plan hash is not the plan’s', async () => {
    const hub = ctx();
    const { identity, node } = await pairedNode(hub);
    await prepare(hub, identity.nodeId);
    const { plan } = await node.next('invoke');
    node.send({
      type: 'invoke.result',
      invocation_id: plan.invocation_id,
      plan_hash: `sha256:${'1'.repeat(64)}`,
      state: 'succeeded',
      result: { exit_code: 0, stdout: '', stderr: '', truncated: false },
    });
    // Frames are handled in order: once the accept sent after it shows, the result was read, and it ended nothing.
    node.send({ type: 'invoke.accepted', invocation_id: plan.invocation_id });
    await until('the invocation runs', async () => (await hub.api.nodeInvocations.get(hub.projectId, plan.invocation_id)).state === 'running');
    await node.close();
  });

  it('re-sends an unfinished plan, unchanged, after the node reconnects', async () => {
    const hub = ctx();
    const { identity, node } = await pairedNode(hub);
    await prepare(hub, identity.nodeId);
    const { plan } = await node.next('invoke');
    node.send({ type: 'invoke.accepted', invocation_id: plan.invocation_id });
    await node.close();
    const again = await admit(hub.url, identity);
    const resent = await again.node.next('invoke');
    assert.deepEqual(resent.plan, plan);
    again.node.send({ type: 'invoke.result', invocation_id: plan.invocation_id, plan_hash: plan.plan_hash, state: 'unknown' });
    await until('the invocation is unknown', async () => (await hub.api.nodeInvocations.get(hub.projectId, plan.invocation_id)).state === 'unknown');
    await again.node.close();
  });

  it('after a reconnect, a sent plan whose cancel was asked meanwhile comes after its cancel', async () => {
    const hub = ctx();
    const { identity, node } = await pairedNode(hub);
    await prepare(hub, identity.nodeId, 'sleep 30');
    const { plan } = await node.next('invoke');
    // The socket dies before the node could say anything: the hub cannot know whether it got the plan.
    node.ws.terminate();
    await node.closed;
    await hub.api.nodeInvocations.cancel(hub.projectId, plan.invocation_id);
    const again = await admit(hub.url, identity);
    const cancel = await again.node.next('invoke.cancel');
    assert.equal(cancel.invocation_id, plan.invocation_id);
    const resent = await again.node.next('invoke');
    assert.deepEqual(resent.plan, plan);
    const sequence = again.node.order.filter((type) => type === 'invoke' || type === 'invoke.cancel');
    assert.deepEqual(sequence.slice(0, 2), ['invoke.cancel', 'invoke'], 'the cancel first, so a node that never got the plan refuses it');
    again.node.send({ type: 'invoke.result', invocation_id: plan.invocation_id, plan_hash: plan.plan_hash, state: 'canceled', termination_confirmed: true });
    await until('the invocation is canceled', async () => (await hub.api.nodeInvocations.get(hub.projectId, plan.invocation_id)).state === 'canceled');
    await again.node.close();
  });

  it('sends a cancel for a sent invocation', async () => {
    const hub = ctx();
    const { identity, node } = await pairedNode(hub);
    await prepare(hub, identity.nodeId, 'sleep 30');
    const { plan } = await node.next('invoke');
    node.send({ type: 'invoke.accepted', invocation_id: plan.invocation_id });
    await until('the invocation runs', async () => (await hub.api.nodeInvocations.get(hub.projectId, plan.invocation_id)).state === 'running');
    await hub.api.nodeInvocations.cancel(hub.projectId, plan.invocation_id);
    const cancel = await node.next('invoke.cancel');
    assert.equal(cancel.invocation_id, plan.invocation_id);
    node.send({ type: 'invoke.result', invocation_id: plan.invocation_id, plan_hash: plan.plan_hash, state: 'canceled', termination_confirmed: true });
    await until('the invocation is canceled', async () => (await hub.api.nodeInvocations.get(hub.projectId, plan.invocation_id)).state === 'canceled');
    await node.close();
  });

  it('asks a node whose catalog changed to reconnect with it (1012), and refuses a second hello (4400)', async () => {
    const hub = ctx();
    const { node } = await pairedNode(hub);
    const catalog = { commands: [...execCatalog().commands].reverse() };
    node.send({ type: 'catalog', catalog, catalog_hash: catalogHash(catalog) });
    assert.equal((await node.closed).code, NODE_CLOSE.reconnect);
    const again = await pairedNode(hub);
    const fresh = await RawNode.challenged(hub.url);
    again.node.send({ type: 'hello', proof: proofFor(again.identity, { nonce: fresh.challenge.nonce }) });
    assert.equal((await again.node.closed).code, NODE_CLOSE.invalidFrame);
    await fresh.node.close();
  });

  it('closes an older connection of the node with 4410 when a newer one arrives', async () => {
    const hub = ctx();
    const { identity, node } = await pairedNode(hub);
    const newer = await admit(hub.url, identity);
    assert.equal((await node.closed).code, NODE_CLOSE.superseded);
    await prepare(hub, identity.nodeId);
    const { plan } = await newer.node.next('invoke');
    assert.equal(plan.node_id, identity.nodeId);
    await until('the node shows connected', async () => (await hub.api.nodes.get(hub.projectId, identity.nodeId)).state === 'connected');
    await newer.node.close();
  });

  it('hands the node over to another process its newer connection reached', async () => {
    const hub = ctx();
    const { identity, node } = await pairedNode(hub);
    const other = await hub.another();
    const newer = await admit(other.url, identity);
    assert.equal((await node.closed).code, NODE_CLOSE.superseded);
    await until('the other process holds the node', () => other.gateway.server.held().includes(identity.nodeId));
    assert.equal(hub.gateway.server.held().includes(identity.nodeId), false);
    await prepare(hub, identity.nodeId);
    const { plan } = await newer.node.next('invoke');
    assert.equal(plan.node_id, identity.nodeId);
    await until('the node shows connected', async () => (await hub.api.nodes.get(hub.projectId, identity.nodeId)).state === 'connected');
    await other.gateway.close();
    assert.equal((await newer.node.closed).code, NODE_CLOSE.goingAway);
    await until('the node shows disconnected', async () => (await hub.api.nodes.get(hub.projectId, identity.nodeId)).state === 'disconnected');
  });
});

await describeGateway(
  'gateway heartbeats',
  (ctx) => {
    it('sends heartbeats, and drops a node silent for three of them', async () => {
      const hub = ctx();
      const { identity, node } = await pairedNode(hub);
      await node.next('heartbeat');
      assert.equal((await node.closed).code, 1006);
      await until('the node shows disconnected', async () => (await hub.api.nodes.get(hub.projectId, identity.nodeId)).state === 'disconnected');
      assert.match((await hub.api.nodes.get(hub.projectId, identity.nodeId)).disconnect_reason ?? '', /no frame/);
    });
  },
  { heartbeatMs: 300 },
);

await describeGateway(
  'gateway lease',
  (ctx) => {
    it('closes the connection (4410) once another holder took the node’s lease', async () => {
      const hub = ctx();
      const { identity, node } = await pairedNode(hub);
      // Between two looks (a second apart) the 200 ms lease runs out, and another holder takes it.
      await until('another holder takes the lease', () => hub.api.leases.take(nodeConnectionLease(identity.nodeId), 'another-process', 60_000));
      assert.equal((await node.closed).code, NODE_CLOSE.superseded);
      assert.equal(hub.gateway.server.held().includes(identity.nodeId), false);
    });
  },
  { lookMs: 1_000, leaseMs: 200 },
);
