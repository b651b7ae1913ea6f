// The nodes wing over REST, on both stores: enrollment tokens (shown once,
// never listed), admission through the gateway port with real signed
// identities (a reused single-use or expired token refused, writing nothing),
// pairing (approve, deny, revoke), degraded catalogs and the pending limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OperationId } from '../../generated/operations.js';
import { NodeAdmissionRefused } from '../../core/surfaces/nodes/node-gateway-port.js';
import type { NodesApi } from '../../core/surfaces/nodes/nodes-api.js';
import { NODE_CLOSE } from '../../core/surfaces/nodes/wire/close-codes.js';
import { MAX_PENDING_PAIRINGS } from '../../core/surfaces/nodes/wire/limits.js';
import { describeEachStore, withSlice, type TestHub } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { descriptor, execCatalog, newIdentity, proofFor, type TestIdentity } from './node-fixtures.js';

type Auth = { Authorization: string };
type Json = Record<string, any>;

async function call(ctx: () => TestHub, method: 'get' | 'post' | 'delete', path: string, operationId: OperationId, status: number, body?: Json, auth?: Auth) {
  let req = ctx()
    .http[method](path)
    .set(auth ?? ctx().auth);
  if (body !== undefined) req = req.send(body);
  const res = await req;
  assertMatchesSpec(res, operationId);
  assert.equal(res.status, status, res.text);
  return res;
}

const enroll = async (ctx: () => TestHub, body?: Json, auth?: Auth) =>
  (await call(ctx, 'post', '/v1/node_enrollments', 'createNodeEnrollment', 201, body, auth)).body as Json & { token: string };

const getNode = async (ctx: () => TestHub, ref: string) => (await call(ctx, 'get', `/v1/nodes/${ref}`, 'getNode', 200)).body as Json;

const gateway = (ctx: () => TestHub): NodesApi['nodeGateway'] => withSlice(ctx().hub, 'nodes').nodeGateway;

async function refusedWith(promise: Promise<unknown>, code: number): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof NodeAdmissionRefused && error.closeCode === code);
}

/** A pending node, admitted with a fresh token. */
async function pendingNode(ctx: () => TestHub, identity: TestIdentity = newIdentity()): Promise<TestIdentity> {
  const { token } = await enroll(ctx);
  const admission = await gateway(ctx).admit(proofFor(identity), token);
  assert.equal(admission.state, 'pending_pairing');
  return identity;
}

describeEachStore('nodes over REST', (ctx) => {
  test('an enrollment token is shown once, with the defaults, and never listed', async () => {
    const before = Date.now() / 1000;
    const created = await enroll(ctx);
    assert.match(created.id, /^nen_/);
    assert.equal(created.max_uses, 1);
    assert.equal(created.uses, 0);
    assert.equal(created.status, 'active');
    assert.ok(created.expires_at >= Math.floor(before) + 3600 - 1 && created.expires_at <= Math.ceil(Date.now() / 1000) + 3600 + 1);
    assert.ok(created.token.length >= 32);

    const named = await enroll(ctx, { name: 'laptop', expires_in_seconds: 86_400, max_uses: 3 });
    assert.equal(named.name, 'laptop');
    assert.equal(named.max_uses, 3);

    const listed = await call(ctx, 'get', '/v1/node_enrollments', 'listNodeEnrollments', 200);
    assert.ok(!listed.text.includes(created.token) && !listed.text.includes(named.token), 'a token was listed');
    for (const enrollment of listed.body.data) assert.equal(enrollment.token, undefined);
    assert.deepEqual(
      listed.body.data.filter((e: Json) => e.id === created.id || e.id === named.id).map((e: Json) => e.id),
      [created.id, named.id],
    );

    // At rest only its hash: no column of the store holds the token.
    const { rows } = await ctx().hub.kernel.db.query<{ row: string }>('SELECT row_to_json(e)::text AS row FROM node_enrollments e WHERE id = $1', [created.id]);
    assert.ok(!rows[0].row.includes(created.token) && !rows[0].row.includes(created.token.slice(5)));

    const tooLong = await ctx().http.post('/v1/node_enrollments').set(ctx().auth).send({ expires_in_seconds: 86_401 });
    assertProblem(tooLong, 400, 'validation-failed');
  });

  test('an enrollment repeated with its Idempotency-Key is the same one, without its token', async () => {
    const first = await ctx().http.post('/v1/node_enrollments').set(ctx().auth).set('Idempotency-Key', 'enroll-once').send({ name: 'once' });
    assertMatchesSpec(first, 'createNodeEnrollment');
    assert.equal(first.status, 201, first.text);
    const again = await ctx().http.post('/v1/node_enrollments').set(ctx().auth).set('Idempotency-Key', 'enroll-once').send({ name: 'once' });
    assertMatchesSpec(again, 'createNodeEnrollment');
    assert.equal(again.status, 201, again.text);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.body.token, undefined, 'the token is shown once');
    const listed = (await call(ctx, 'get', '/v1/node_enrollments?limit=100', 'listNodeEnrollments', 200)).body.data;
    assert.equal(listed.filter((e: Json) => e.name === 'once').length, 1);
  });

  test('/metrics counts nodes and invocations by state', async () => {
    await pendingNode(ctx);
    const metrics = await ctx().http.get('/metrics');
    assert.equal(metrics.status, 200);
    const pending = Number(/^palai_nodes\{state="pending_pairing"\} (\d+)$/m.exec(metrics.text)?.[1]);
    assert.ok(pending >= 1, metrics.text.slice(0, 200));
    assert.match(metrics.text, /^# TYPE palai_node_invocations gauge$/m);
  });

  test('revoking an enrollment is idempotent, and its token enrolls nobody', async () => {
    const created = await enroll(ctx);
    const first = (await call(ctx, 'delete', `/v1/node_enrollments/${created.id}`, 'revokeNodeEnrollment', 200)).body;
    assert.equal(first.status, 'revoked');
    const again = (await call(ctx, 'delete', `/v1/node_enrollments/${created.id}`, 'revokeNodeEnrollment', 200)).body;
    assert.deepEqual(again, first);
    const identity = newIdentity();
    await refusedWith(gateway(ctx).admit(proofFor(identity), created.token), NODE_CLOSE.enrollmentRefused);
    assertProblem(await ctx().http.get(`/v1/nodes/${identity.nodeId}`).set(ctx().auth), 404, 'not-found');
    assertProblem(await ctx().http.delete('/v1/node_enrollments/nen_nosuch').set(ctx().auth), 404, 'not-found');
  });

  test('a reused single-use token and an expired token are refused and create no node', async () => {
    const { token, id } = await enroll(ctx);
    const first = newIdentity();
    await gateway(ctx).admit(proofFor(first), token);
    const used = (await call(ctx, 'get', '/v1/node_enrollments', 'listNodeEnrollments', 200, undefined)).body.data.find((e: Json) => e.id === id);
    assert.equal(used.status, 'used_up');
    assert.equal(used.uses, 1);

    const second = newIdentity();
    await refusedWith(gateway(ctx).admit(proofFor(second), token), NODE_CLOSE.enrollmentRefused);
    assertProblem(await ctx().http.get(`/v1/nodes/${second.nodeId}`).set(ctx().auth), 404, 'not-found');

    const expiring = await enroll(ctx, { max_uses: 5 });
    await ctx().hub.kernel.db.query("UPDATE node_enrollments SET expires_at = now() - interval '1 second' WHERE id = $1", [expiring.id]);
    const late = newIdentity();
    await refusedWith(gateway(ctx).admit(proofFor(late), expiring.token), NODE_CLOSE.enrollmentRefused);
    assertProblem(await ctx().http.get(`/v1/nodes/${late.nodeId}`).set(ctx().auth), 404, 'not-found');
    const after = (await call(ctx, 'get', '/v1/node_enrollments', 'listNodeEnrollments', 200)).body.data.find((e: Json) => e.id === expiring.id);
    assert.equal(after.status, 'expired');
    assert.equal(after.uses, 0);

    // Without a token an unknown identity is refused too; a known one needs none.
    await refusedWith(gateway(ctx).admit(proofFor(newIdentity()), undefined), NODE_CLOSE.enrollmentRefused);
    assert.equal((await gateway(ctx).admit(proofFor(first), undefined)).nodeId, first.nodeId);
  });

  test('two identities racing for one single-use token: exactly one is enrolled', async () => {
    const { token } = await enroll(ctx);
    const racers = [newIdentity(), newIdentity(), newIdentity()];
    const outcomes = await Promise.allSettled(racers.map((identity) => gateway(ctx).admit(proofFor(identity), token)));
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') assert.equal((outcome.reason as NodeAdmissionRefused).closeCode, NODE_CLOSE.enrollmentRefused);
    }
    const found = await Promise.all(racers.map((identity) => ctx().http.get(`/v1/nodes/${identity.nodeId}`).set(ctx().auth)));
    assert.equal(found.filter((res) => res.status === 200).length, 1);
  });

  test('the store refuses, writing nothing, a proof that does not hold or a catalog over a limit', async () => {
    const { token, id } = await enroll(ctx, { max_uses: 10 });
    const identity = newIdentity();
    const forged = { ...proofFor(identity), client_version: '9.9.9' };
    await refusedWith(gateway(ctx).admit(forged, token), NODE_CLOSE.invalidProof);
    await refusedWith(gateway(ctx).admit(proofFor(identity, { catalogHash: `sha256:${'0'.repeat(64)}` }), token), NODE_CLOSE.invalidProof);
    const huge = { commands: Array.from({ length: 129 }, (_, i) => descriptor(`cmd${i}.run.v1`)) };
    await refusedWith(gateway(ctx).admit(proofFor(identity, { catalog: huge }), token), NODE_CLOSE.catalogTooLarge);
    assertProblem(await ctx().http.get(`/v1/nodes/${identity.nodeId}`).set(ctx().auth), 404, 'not-found');
    const enrollment = (await call(ctx, 'get', '/v1/node_enrollments?limit=100', 'listNodeEnrollments', 200)).body.data.find((e: Json) => e.id === id);
    assert.equal(enrollment.uses, 0);
  });

  test('a pending node is listed and shown, filtered by state', async () => {
    const identity = await pendingNode(ctx);
    const node = await getNode(ctx, identity.nodeId);
    assert.equal(node.state, 'pending_pairing');
    assert.equal(node.catalog_hash, proofFor(identity).catalog_hash);
    assert.deepEqual(node.aliases, []);
    assert.deepEqual(node.usable_commands, []);
    assert.equal(node.platform, 'linux');
    const pending = (await call(ctx, 'get', '/v1/nodes?state=pending_pairing', 'listNodes', 200)).body.data.map((n: Json) => n.id);
    assert.ok(pending.includes(identity.nodeId));
    const revoked = (await call(ctx, 'get', '/v1/nodes?state=revoked', 'listNodes', 200)).body.data.map((n: Json) => n.id);
    assert.ok(!revoked.includes(identity.nodeId));
    // Another project does not see it.
    const other = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
    assertProblem(await ctx().http.get(`/v1/nodes/${identity.nodeId}`).set(other), 404, 'not-found');
  });

  test('approval names commands of the advertised catalog, binds their descriptors and gives aliases', async () => {
    const identity = await pendingNode(ctx);
    const outside = await ctx()
      .http.post(`/v1/nodes/${identity.nodeId}/approve`)
      .set(ctx().auth)
      .send({ allowed_commands: ['shell.exec.v1', 'files.read.v1'] });
    assertProblem(outside, 400, 'invalid-request');
    assert.match(outside.body.detail, /files\.read\.v1/);
    assert.deepEqual(outside.body.errors, [{ pointer: '/allowed_commands/1', detail: 'is not in the advertised catalog' }]);
    assert.equal((await getNode(ctx, identity.nodeId)).state, 'pending_pairing');

    const approved = (
      await call(ctx, 'post', `/v1/nodes/${identity.nodeId}/approve`, 'approveNode', 200, {
        allowed_commands: ['shell.exec.v1'],
        aliases: ['box', 'build-box'],
        display_name: 'Build box',
      })
    ).body;
    assert.equal(approved.state, 'disconnected');
    assert.deepEqual(approved.aliases, ['box', 'build-box']);
    assert.equal(approved.display_name, 'Build box');
    assert.equal(approved.approved_catalog_hash, approved.catalog_hash);
    assert.deepEqual(approved.usable_commands, ['shell.exec.v1']);

    await gateway(ctx).connected(identity.nodeId);
    assert.equal((await getNode(ctx, 'box')).state, 'connected');
    const byAlias = (await call(ctx, 'get', '/v1/nodes?alias=build-box', 'listNodes', 200)).body.data;
    assert.deepEqual(
      byAlias.map((n: Json) => n.id),
      [identity.nodeId],
    );
    const admission = await gateway(ctx).admission(identity.nodeId);
    assert.deepEqual(admission?.usableCommands, ['shell.exec.v1']);

    // An alias of another node is refused, naming it.
    const other = await pendingNode(ctx);
    const taken = await ctx()
      .http.post(`/v1/nodes/${other.nodeId}/approve`)
      .set(ctx().auth)
      .send({ allowed_commands: [], aliases: ['box'] });
    assertProblem(taken, 400, 'invalid-request');

    await gateway(ctx).disconnected(identity.nodeId, 'the connection closed');
    const gone = await getNode(ctx, 'box');
    assert.equal(gone.state, 'disconnected');
    assert.equal(gone.disconnect_reason, 'the connection closed');
  });

  test('a changed catalog degrades the node: unchanged approved commands stay usable until approved again', async () => {
    const identity = await pendingNode(ctx);
    await call(ctx, 'post', `/v1/nodes/${identity.nodeId}/approve`, 'approveNode', 200, { allowed_commands: ['shell.exec.v1', 'system.exec.v1'] });
    await gateway(ctx).connected(identity.nodeId);

    const changed = { commands: [descriptor('shell.exec.v1'), descriptor('system.exec.v1', { max_timeout_seconds: 60 }), descriptor('net.ping.v1')] };
    const admission = await gateway(ctx).admit(proofFor(identity, { catalog: changed }), undefined);
    assert.equal(admission.state, 'degraded');
    assert.deepEqual(admission.usableCommands, ['shell.exec.v1']);
    assert.deepEqual(admission.allowedCommands, ['shell.exec.v1', 'system.exec.v1']);
    const degraded = await getNode(ctx, identity.nodeId);
    assert.equal(degraded.state, 'degraded');
    assert.notEqual(degraded.catalog_hash, degraded.approved_catalog_hash);
    assert.deepEqual(degraded.usable_commands, ['shell.exec.v1']);

    const tools = await withSlice(ctx().hub, 'nodes').nodeCalls.tools(ctx().projectId, identity.nodeId);
    assert.deepEqual(
      tools?.commands.map((c) => c.name),
      ['shell.exec.v1'],
    );

    const again = (await call(ctx, 'post', `/v1/nodes/${identity.nodeId}/approve`, 'approveNode', 200, { allowed_commands: ['system.exec.v1', 'net.ping.v1'] }))
      .body;
    assert.equal(again.state, 'connected');
    assert.deepEqual(again.usable_commands, ['system.exec.v1', 'net.ping.v1']);

    // Back to the first catalog: its shell.exec.v1 was not approved this time, system.exec.v1's descriptor differs.
    const back = await gateway(ctx).admit(proofFor(identity, { catalog: execCatalog() }), undefined);
    assert.equal(back.state, 'degraded');
    assert.deepEqual(back.usableCommands, []);
  });

  test('deny refuses a pending node, revoke a paired one: both are revoked and refused at the gateway', async () => {
    const denied = await pendingNode(ctx);
    const deniedView = (await call(ctx, 'post', `/v1/nodes/${denied.nodeId}/deny`, 'denyNode', 200)).body;
    assert.equal(deniedView.state, 'revoked');
    await refusedWith(gateway(ctx).admit(proofFor(denied), undefined), NODE_CLOSE.revoked);
    assertProblem(await ctx().http.post(`/v1/nodes/${denied.nodeId}/approve`).set(ctx().auth).send({ allowed_commands: [] }), 409, 'invalid-state');

    const paired = await pendingNode(ctx);
    await call(ctx, 'post', `/v1/nodes/${paired.nodeId}/approve`, 'approveNode', 200, { allowed_commands: ['shell.exec.v1'], aliases: ['gone'] });
    assertProblem(await ctx().http.post(`/v1/nodes/${paired.nodeId}/deny`).set(ctx().auth), 409, 'invalid-state');
    const revoked = (await call(ctx, 'post', `/v1/nodes/gone/revoke`, 'revokeNode', 200, { reason: 'laptop lost' })).body;
    assert.equal(revoked.state, 'revoked');
    assert.equal(revoked.revocation_reason, 'laptop lost');
    assert.deepEqual(revoked.usable_commands, []);
    // Again, and with no body at all: it changes nothing.
    const again = (await call(ctx, 'post', `/v1/nodes/${paired.nodeId}/revoke`, 'revokeNode', 200)).body;
    assert.deepEqual(again, revoked);
    await refusedWith(gateway(ctx).admit(proofFor(paired), undefined), NODE_CLOSE.revoked);
    assert.equal(await withSlice(ctx().hub, 'nodes').nodeCalls.tools(ctx().projectId, 'gone'), null);
    assertProblem(await ctx().http.post('/v1/nodes/node_nosuch/revoke').set(ctx().auth), 404, 'not-found');
  });

  test(`the ${MAX_PENDING_PAIRINGS + 1}th pending pairing of a project is refused and writes nothing`, async () => {
    const auth = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
    const { token, id } = await enroll(ctx, { max_uses: 1000 }, auth);
    const admitted: string[] = [];
    for (let i = 0; i < MAX_PENDING_PAIRINGS; i++) {
      const identity = newIdentity();
      await gateway(ctx).admit(proofFor(identity), token);
      admitted.push(identity.nodeId);
    }
    const extra = newIdentity();
    await refusedWith(gateway(ctx).admit(proofFor(extra), token), NODE_CLOSE.busy);
    const enrollment = (await call(ctx, 'get', '/v1/node_enrollments', 'listNodeEnrollments', 200, undefined, auth)).body.data.find((e: Json) => e.id === id);
    assert.equal(enrollment.uses, MAX_PENDING_PAIRINGS);
    assertProblem(await ctx().http.get(`/v1/nodes/${extra.nodeId}`).set(auth), 404, 'not-found');
    // Paged oldest first, the cursor a node id.
    const seen: string[] = [];
    for (let after = ''; ;) {
      const page = (await call(ctx, 'get', `/v1/nodes?state=pending_pairing&limit=50${after}`, 'listNodes', 200, undefined, auth)).body;
      seen.push(...page.data.map((n: Json) => n.id));
      if (!page.has_more) break;
      after = `&after=${page.last_id}`;
    }
    assert.deepEqual([...seen].sort(), [...admitted].sort());
    assert.equal(seen[0], admitted[0]);
  });

  test('a node without invocations has an empty page; an unknown invocation is 404', async () => {
    const identity = await pendingNode(ctx);
    const page = (await call(ctx, 'get', `/v1/nodes/${identity.nodeId}/invocations`, 'listNodeInvocations', 200)).body;
    assert.deepEqual(page.data, []);
    assertProblem(await ctx().http.get('/v1/node_invocations/ninv_nosuch').set(ctx().auth), 404, 'not-found');
    assertProblem(await ctx().http.post('/v1/node_invocations/ninv_nosuch/cancel').set(ctx().auth), 404, 'not-found');
  });
});
