// The invocation ledger, on both stores, with the test standing in for the
// gateway's process: a call prepares one plan (idempotent on
// `<response_id>:<call_id>`), is dispatched once (and re-sent after a
// reconnect), accepted, finished — and the result lands on the response's
// parked call in the same transaction. Refusals (COMMAND_UNAVAILABLE,
// IDEMPOTENCY_CONFLICT, NODE_BUSY), the sweep (expired → NODE_UNAVAILABLE,
// cancelled before sending → INVOCATION_CANCELED) and cancels end the call
// with the error codes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeModel } from '../../adapters/models/fake/fake-model.js';
import { startHub, type Hub } from '../../cli/hub.js';
import type { NodeInvokeResultFrame } from '../../generated/protocol-schemas.js';
import { createApiKey } from '../../core/auth/api-keys.js';
import { createProject } from '../../core/auth/projects.js';
import { createLogger } from '../../core/logger.js';
import { ModelRegistry } from '../../core/models/model-port.js';
import type { NodeCallRequest } from '../../core/surfaces/nodes/node-calls-port.js';
import { nodeConnectionLease } from '../../core/surfaces/nodes/node-gateway-port.js';
import { planFault } from '../../core/surfaces/nodes/wire/execution-plan.js';
import { MAX_OPEN_INVOCATIONS } from '../../core/surfaces/nodes/wire/limits.js';
import { testConfig } from '../support/hub.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';
import { until } from '../support/until.js';
import { execCatalog, newIdentity, proofFor } from './node-fixtures.js';

const HOLDER = 'test-holder';
const result = (invocationId: string, planHash: string, stdout: string, state: NodeInvokeResultFrame['state'] = 'succeeded'): NodeInvokeResultFrame => ({
  type: 'invoke.result',
  invocation_id: invocationId,
  plan_hash: planHash,
  state,
  result: { exit_code: 0, stdout, stderr: '', truncated: false },
});

for (const kind of storeKinds) {
  describe(`the node invocation ledger [${kind}]`, { skip: kind === 'postgres' ? ((await postgresUnavailable()) ?? false) : false }, () => {
    let database: TestDatabase;
    let hub: Hub;
    let projectId: string;
    const nodes = () => hub.surfaces.slices.nodes;
    let calls = 0;

    before(async () => {
      database = await openTestDatabase(kind);
      hub = await startHub({
        config: testConfig(),
        db: database.db,
        logger: createLogger('silent'),
        models: new ModelRegistry().register(new FakeModel()),
      });
      projectId = (await createProject(database.db, 'ledger')).id;
      await createApiKey(database.db, projectId, 'test');
    });
    after(async () => {
      await hub?.close();
      await database?.drop();
    });

    /** A paired, connected node approved for shell.exec.v1. */
    async function pairedNode(): Promise<string> {
      const identity = newIdentity();
      const { token } = await nodes().nodeEnrollments.create(projectId, {});
      await nodes().nodeGateway.admit(proofFor(identity), token);
      await nodes().nodes.approve(projectId, identity.nodeId, { allowed_commands: ['shell.exec.v1'] });
      await nodes().nodeGateway.connected(identity.nodeId);
      // What the gateway holds while the node is connected: only its holder dispatches.
      const lease = await hub.api.leases.take(nodeConnectionLease(identity.nodeId), HOLDER, 10 * 60_000);
      assert.ok(lease, 'the connection lease is free');
      return identity.nodeId;
    }

    const request = (nodeId: string, script = 'echo hi'): NodeCallRequest => ({
      responseId: `resp_test${++calls}`,
      callId: 'call_1',
      nodeId,
      command: 'shell.exec.v1',
      input: { script },
    });
    const errorCode = (output: string | null) => (output === null ? null : (JSON.parse(output) as { error?: { code: string } }).error?.code);

    test('a plan is prepared once per call, dispatched once, re-sent after a reconnect, and its result is the output', async () => {
      const nodeId = await pairedNode();
      const call = request(nodeId);
      const prepared = await nodes().nodeCalls.prepare(projectId, call);
      assert.equal(prepared.output, null);
      assert.ok(prepared.expiresAt.getTime() <= Date.now() + 5 * 60_000);
      const again = await nodes().nodeCalls.prepare(projectId, call);
      assert.equal(again.invocationId, prepared.invocationId);
      assert.equal(again.planHash, prepared.planHash);
      assert.equal((await nodes().nodeInvocations.get(projectId, prepared.invocationId)).state, 'prepared');

      const [plan, ...more] = await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false });
      assert.deepEqual(more, []);
      assert.equal(plan.invocation_id, prepared.invocationId);
      assert.equal(plan.plan_hash, prepared.planHash);
      assert.equal(plan.idempotency_key, `${call.responseId}:${call.callId}`);
      assert.equal(planFault(plan, { nodeId, catalogHash: proofFor(newIdentity(), { catalog: execCatalog() }).catalog_hash }), null);
      assert.deepEqual(await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false }), [], 'dispatched once');
      // The node reconnected (to the same process here): what was sent is sent again, unchanged.
      const resent = await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: true });
      assert.deepEqual(resent, [plan], 'the same plan, re-sent');

      await nodes().nodeGateway.accepted(nodeId, plan.invocation_id);
      assert.equal((await nodes().nodeInvocations.get(projectId, plan.invocation_id)).state, 'running');
      assert.equal(await nodes().nodeCalls.outcome(plan.invocation_id), null);
      assert.equal(await nodes().nodeGateway.finished(nodeId, result(plan.invocation_id, `sha256:${'0'.repeat(64)}`, 'forged')), 'refused');
      assert.equal(await nodes().nodeGateway.finished(nodeId, result(plan.invocation_id, plan.plan_hash, 'hi\n')), 'recorded');
      assert.equal(await nodes().nodeGateway.finished(nodeId, result(plan.invocation_id, plan.plan_hash, 'second')), 'repeated');
      const output = await nodes().nodeCalls.outcome(plan.invocation_id);
      assert.deepEqual(JSON.parse(output!), { exit_code: 0, stdout: 'hi\n', stderr: '', truncated: false });
      const view = await nodes().nodeInvocations.get(projectId, plan.invocation_id);
      assert.equal(view.state, 'succeeded');
      assert.equal(view.exit_code, 0);
      // A replay of the call after it ended answers from the ledger.
      assert.equal((await nodes().nodeCalls.prepare(projectId, call)).output, output);
      assert.deepEqual(await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: true }), []);
    });

    test('the same call prepared by several processes at once is one invocation', async () => {
      const nodeId = await pairedNode();
      const call = request(nodeId);
      const prepared = await Promise.all([1, 2, 3, 4].map(() => nodes().nodeCalls.prepare(projectId, call)));
      assert.equal(new Set(prepared.map((p) => p.invocationId)).size, 1);
      assert.ok(prepared.every((p) => p.output === null));
      const { rows } = await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM node_invocations WHERE response_id = $1', [call.responseId]);
      assert.equal(rows[0].n, 1);
    });

    test('the hub sweeps on its own: an expired plan ends NODE_UNAVAILABLE without anyone asking', async () => {
      const nodeId = await pairedNode();
      const expiring = await nodes().nodeCalls.prepare(projectId, request(nodeId));
      await database.db.query("UPDATE node_invocations SET expires_at = now() - interval '1 second' WHERE id = $1", [expiring.invocationId]);
      await until('the sweep loop ends it', async () => (await nodes().nodeInvocations.get(projectId, expiring.invocationId)).state === 'expired');
    });

    test('the purge removes ended invocations past the retention, oldest first, and never an open one', async () => {
      const nodeId = await pairedNode();
      const [old, recent, open] = [request(nodeId), request(nodeId), request(nodeId)];
      const ids: string[] = [];
      for (const call of [old, recent, open]) ids.push((await nodes().nodeCalls.prepare(projectId, call)).invocationId);
      const plans = await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false });
      for (const plan of plans.filter((p) => p.invocation_id !== ids[2])) {
        await nodes().nodeGateway.accepted(nodeId, plan.invocation_id);
        assert.equal(await nodes().nodeGateway.finished(nodeId, result(plan.invocation_id, plan.plan_hash, 'done')), 'recorded');
      }
      // One ended eight days ago, one just now; the third is still open (and old).
      await database.db.query("UPDATE node_invocations SET completed_at = now() - interval '8 days' WHERE id = $1", [ids[0]]);
      await database.db.query("UPDATE node_invocations SET created_at = now() - interval '9 days' WHERE id = $1", [ids[2]]);
      assert.ok((await nodes().nodeGateway.purge()) >= 1);
      const { rows } = await database.db.query<{ id: string }>('SELECT id FROM node_invocations WHERE id = ANY($1::text[]) ORDER BY id', [ids]);
      assert.deepEqual(
        rows.map((r) => r.id),
        [ids[1], ids[2]].sort(),
      );
    });

    test('the same call with another plan is IDEMPOTENCY_CONFLICT; a command not usable is COMMAND_UNAVAILABLE', async () => {
      const nodeId = await pairedNode();
      const call = request(nodeId, 'echo one');
      const prepared = await nodes().nodeCalls.prepare(projectId, call);
      const conflict = await nodes().nodeCalls.prepare(projectId, { ...call, input: { script: 'echo two' } });
      assert.equal(errorCode(conflict.output), 'IDEMPOTENCY_CONFLICT');
      assert.equal((await nodes().nodeInvocations.get(projectId, prepared.invocationId)).state, 'prepared', 'the first plan stands');

      const unavailable = await nodes().nodeCalls.prepare(projectId, { ...request(nodeId), command: 'system.exec.v1' });
      assert.equal(errorCode(unavailable.output), 'COMMAND_UNAVAILABLE');
      const row = await nodes().nodeInvocations.get(projectId, unavailable.invocationId);
      assert.equal(row.state, 'failed');
      assert.equal(row.failure_code, 'COMMAND_UNAVAILABLE');
      assert.ok(!(await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false })).some((p) => p.invocation_id === unavailable.invocationId));
    });

    test(`the node's ${MAX_OPEN_INVOCATIONS + 1}th open invocation is NODE_BUSY`, async () => {
      const nodeId = await pairedNode();
      for (let i = 0; i < MAX_OPEN_INVOCATIONS; i++) assert.equal((await nodes().nodeCalls.prepare(projectId, request(nodeId))).output, null);
      const busy = await nodes().nodeCalls.prepare(projectId, request(nodeId));
      assert.equal(errorCode(busy.output), 'NODE_BUSY');
      const listed = await nodes().nodes.invocations(projectId, nodeId, { limit: 2 });
      assert.equal(listed.data[0].id, busy.invocationId, 'newest first');
      assert.equal(listed.data[0].failure_code, 'NODE_BUSY');
      assert.equal(listed.has_more, true);
    });

    test('only the holder of the node’s connection lease dispatches its plans', async () => {
      const nodeId = await pairedNode();
      const prepared = await nodes().nodeCalls.prepare(projectId, request(nodeId));
      assert.deepEqual(await nodes().nodeGateway.claimDispatch([nodeId], 'another-process', { resend: true }), []);
      assert.equal((await nodes().nodeInvocations.get(projectId, prepared.invocationId)).state, 'prepared');
      const [plan] = await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false });
      assert.equal(plan.invocation_id, prepared.invocationId);
    });

    test('a plan for a command the operator withdrew before it was sent is not sent', async () => {
      const nodeId = await pairedNode();
      await nodes().nodes.approve(projectId, nodeId, { allowed_commands: ['shell.exec.v1', 'system.exec.v1'] });
      const prepared = await nodes().nodeCalls.prepare(projectId, request(nodeId));
      await nodes().nodes.approve(projectId, nodeId, { allowed_commands: ['system.exec.v1'] });
      assert.deepEqual(await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false }), []);
      assert.equal((await nodes().nodeInvocations.get(projectId, prepared.invocationId)).state, 'prepared');
    });

    test('the sweep ends expired plans as NODE_UNAVAILABLE and never sends them; a cancel before sending is INVOCATION_CANCELED', async () => {
      const nodeId = await pairedNode();
      const expiring = await nodes().nodeCalls.prepare(projectId, request(nodeId));
      await database.db.query("UPDATE node_invocations SET expires_at = now() - interval '1 second' WHERE id = $1", [expiring.invocationId]);
      assert.deepEqual(await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false }), [], 'past its time to live: not sent');
      assert.ok((await nodes().nodeGateway.sweep()) >= 1);
      assert.equal((await nodes().nodeInvocations.get(projectId, expiring.invocationId)).state, 'expired');
      assert.equal(errorCode(await nodes().nodeCalls.outcome(expiring.invocationId)), 'NODE_UNAVAILABLE');

      const canceled = await nodes().nodeCalls.prepare(projectId, request(nodeId));
      const view = await nodes().nodeInvocations.cancel(projectId, canceled.invocationId);
      assert.equal(view.state, 'canceled');
      assert.equal(errorCode(await nodes().nodeCalls.outcome(canceled.invocationId)), 'INVOCATION_CANCELED');
      assert.deepEqual(await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: true }), [], 'never sent');
      assert.deepEqual(await nodes().nodeInvocations.cancel(projectId, canceled.invocationId), view, 'an ended one is returned as it is');
    });

    test('a sent invocation whose node never reports, past its expiry and timeout, ends INVOCATION_UNKNOWN', async () => {
      const nodeId = await pairedNode();
      const silent = await nodes().nodeCalls.prepare(projectId, request(nodeId));
      const reporting = await nodes().nodeCalls.prepare(projectId, request(nodeId));
      await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false });
      await nodes().nodeGateway.accepted(nodeId, silent.invocationId);
      // Expired a day ago: whatever its timeout, the node's answer cannot come any more. The other is only past its expiry.
      await database.db.query("UPDATE node_invocations SET expires_at = now() - interval '1 day' WHERE id = $1", [silent.invocationId]);
      await database.db.query("UPDATE node_invocations SET expires_at = now() - interval '1 second' WHERE id = $1", [reporting.invocationId]);
      await nodes().nodeGateway.sweep();
      assert.equal((await nodes().nodeInvocations.get(projectId, silent.invocationId)).state, 'unknown');
      assert.equal(errorCode(await nodes().nodeCalls.outcome(silent.invocationId)), 'INVOCATION_UNKNOWN');
      assert.equal((await nodes().nodeInvocations.get(projectId, reporting.invocationId)).state, 'dispatched', 'a running command may still report');
    });

    test('a cancel of a sent invocation asks its holder to stop it; the node reports canceled; unknown is INVOCATION_UNKNOWN', async () => {
      const nodeId = await pairedNode();
      const running = await nodes().nodeCalls.prepare(projectId, request(nodeId, 'sleep 30'));
      await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false });
      await nodes().nodeGateway.accepted(nodeId, running.invocationId);
      assert.deepEqual(await nodes().nodeGateway.toCancel([nodeId]), []);
      assert.equal((await nodes().nodeInvocations.cancel(projectId, running.invocationId)).state, 'running');
      assert.deepEqual(await nodes().nodeGateway.toCancel([nodeId]), [running.invocationId]);
      await nodes().nodeGateway.finished(nodeId, {
        type: 'invoke.result',
        invocation_id: running.invocationId,
        plan_hash: running.planHash,
        state: 'canceled',
        termination_confirmed: true,
      });
      const view = await nodes().nodeInvocations.get(projectId, running.invocationId);
      assert.equal(view.state, 'canceled');
      assert.equal(view.termination_confirmed, true);
      assert.equal(errorCode(await nodes().nodeCalls.outcome(running.invocationId)), 'INVOCATION_CANCELED');
      assert.deepEqual(await nodes().nodeGateway.toCancel([nodeId]), []);

      const lost = await nodes().nodeCalls.prepare(projectId, request(nodeId));
      await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false });
      await nodes().nodeGateway.finished(nodeId, { type: 'invoke.result', invocation_id: lost.invocationId, plan_hash: lost.planHash, state: 'unknown' });
      assert.equal(errorCode(await nodes().nodeCalls.outcome(lost.invocationId)), 'INVOCATION_UNKNOWN');
    });

    test('revoking a node cancels its open invocations', async () => {
      const nodeId = await pairedNode();
      const waiting = await nodes().nodeCalls.prepare(projectId, request(nodeId));
      const sent = await nodes().nodeCalls.prepare(projectId, request(nodeId));
      await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false });
      await nodes().nodes.revoke(projectId, nodeId, {});
      for (const id of [waiting.invocationId, sent.invocationId]) {
        assert.equal((await nodes().nodeInvocations.get(projectId, id)).state, 'canceled');
        assert.equal(errorCode(await nodes().nodeCalls.outcome(id)), 'INVOCATION_CANCELED');
      }
      assert.equal(errorCode((await nodes().nodeCalls.prepare(projectId, request(nodeId))).output), 'COMMAND_UNAVAILABLE');
    });

    test("a node's result lands on the response's parked call and the run completes with it", async () => {
      const nodeId = await pairedNode();
      await hub.api.agents.create(projectId, {
        name: `runner-${kind}`,
        model: { provider: 'fake', script: [{ tool_calls: [{ name: `node__${nodeId}__shell_exec`, arguments: { script: 'echo run' } }] }, { text: 'done' }] },
        tools: [{ type: 'node', node: nodeId }],
      });
      const response = await hub.api.responses.admit(projectId, { agent: `runner-${kind}`, input: [{ role: 'user', content: 'go' }] });
      const plan = await until('the plan is sent', async () => (await nodes().nodeGateway.claimDispatch([nodeId], HOLDER, { resend: false }))[0]);
      assert.equal(plan.idempotency_key.split(':')[0], response.id);
      await until('the response waits for the node', async () => (await hub.api.responses.get(projectId, response.id)).status === 'parked');
      await nodes().nodeGateway.accepted(nodeId, plan.invocation_id);
      assert.equal(await nodes().nodeGateway.finished(nodeId, result(plan.invocation_id, plan.plan_hash, 'run\n')), 'recorded');
      const done = await until('the response completes', async () => {
        const state = await hub.api.responses.get(projectId, response.id);
        return state.status === 'completed' ? state : null;
      });
      const outputs = done.output.flatMap((item) => (item.type === 'function_call_output' ? [item.output] : []));
      assert.deepEqual(
        outputs.map((o) => JSON.parse(o)),
        [{ exit_code: 0, stdout: 'run\n', stderr: '', truncated: false }],
      );
      const [invocation] = (await nodes().nodes.invocations(projectId, nodeId, {})).data;
      assert.equal(invocation.response_id, response.id);
      assert.equal(invocation.state, 'succeeded');
    });
  });
}
