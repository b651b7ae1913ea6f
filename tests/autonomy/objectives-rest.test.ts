// Objectives over REST, on both stores: creation and its refusals, policies
// approved by hash (a wrong hash, a superseded version, two approvals racing),
// schedules and their refusals, the policy gate (no wake and no model call
// without an approved, unexpired, unrevoked policy), manual wakes under an
// Idempotency-Key, and the kill switch. The hub's scheduler loop is stopped
// here, so each tick is the test's own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachStore, withSlice, type TestHub } from '../support/hub.js';
import { assertProblem } from '../support/spec.js';
import { until, untilStorePasses } from '../support/until.js';
import { agent, approvedPolicy, call, objective, ownTicks, POLICY, send, STUCK_AGENT, wakes, type Json } from './objectives-support.js';

const tick = (ctx: () => TestHub) => withSlice(ctx().hub, 'autonomy').scheduler.tick();

/** Until the trigger's next occurrence is due by the store's clock. */
async function untilDue(ctx: () => TestHub, trigger: Json): Promise<void> {
  await untilStorePasses(ctx().hub.kernel.db, new Date(trigger.next_due_at * 1000), `trigger ${trigger.id} due`);
}

async function responsesOf(ctx: () => TestHub, objectiveId: string): Promise<Json[]> {
  const { rows } = await ctx().hub.kernel.db.query<Json>(
    "SELECT id, status, metadata, input FROM responses WHERE metadata ->> 'palai_objective' = $1 ORDER BY created_at",
    [objectiveId],
  );
  return rows;
}

describeEachStore(
  'objectives over REST',
  (ctx) => {
    ownTicks(ctx);

    test('an objective is blocked until a policy is approved; bad input names its field and writes nothing', async () => {
      const created = await objective(ctx, { success_criteria: 'the last deploy is green', priority: 3 });
      assert.match(created.id, /^obj_/);
      assert.equal(created.status, 'blocked');
      assert.match(created.blocked_reason, /^no-approved-policy/);
      assert.equal(created.session_mode, 'objective');
      assert.equal(created.policy, null);
      assert.deepEqual(await call(ctx, 'get', `/v1/objectives/${created.id}`, 'getObjective', 200), created);

      const agentId = created.agent_id;
      for (const [body, pointer] of [
        [{ agent: agentId, description: '' }, '/description'],
        [{ agent: agentId, description: '   ' }, '/description'],
        [{ agent: agentId, description: 'x', session_mode: 'sometimes' }, '/session_mode'],
        [{ agent: agentId, description: 'x', colour: 'red' }, ''],
      ] as const) {
        const res = await send(ctx, 'post', '/v1/objectives', body);
        assertProblem(res, 400, 'validation-failed');
        assert.ok(JSON.stringify(res.body.errors).includes(pointer), res.text);
      }
      assertProblem(await send(ctx, 'post', '/v1/objectives', { agent: 'nobody', description: 'x' }), 404, 'agent-not-found');
      const listed = await call(ctx, 'get', '/v1/objectives?limit=100', 'listObjectives', 200);
      assert.deepEqual(
        listed.data.map((o: Json) => o.id),
        [created.id],
      );
    });

    test('a policy is approved by its canonical hash only; the one before is superseded; two approvals racing, one wins', async () => {
      const { id } = await objective(ctx);
      const draft = await call(ctx, 'post', `/v1/objectives/${id}/policies`, 'createObjectivePolicy', 201, { document: POLICY });
      assert.equal(draft.status, 'draft');
      assert.equal(draft.version, 1);
      assert.match(draft.hash, /^sha256:[0-9a-f]{64}$/);
      // Key order does not change the hash: the same document is the same version.
      const reordered = Object.fromEntries(Object.entries(POLICY).reverse());
      assert.equal((await call(ctx, 'post', `/v1/objectives/${id}/policies`, 'createObjectivePolicy', 201, { document: reordered })).version, 1);

      const wrong = await send(ctx, 'post', `/v1/objectives/${id}/policies/1/approve`, { hash: `sha256:${'0'.repeat(64)}` });
      assertProblem(wrong, 409, 'policy-hash-mismatch');
      assert.ok(!wrong.text.includes(draft.hash), 'the problem does not hand out the hash to approve');
      assert.equal((await call(ctx, 'get', `/v1/objectives/${id}`, 'getObjective', 200)).status, 'blocked');

      const racing = await Promise.all([1, 2].map(() => send(ctx, 'post', `/v1/objectives/${id}/policies/1/approve`, { hash: draft.hash })));
      assert.deepEqual(racing.map((r) => r.status).sort(), [200, 409], racing.map((r) => r.text).join('\n'));
      const objectiveNow = await call(ctx, 'get', `/v1/objectives/${id}`, 'getObjective', 200);
      assert.equal(objectiveNow.status, 'active');
      assert.deepEqual(objectiveNow.policy, { version: 1, hash: draft.hash, expires_at: null });

      const second = await call(ctx, 'post', `/v1/objectives/${id}/policies`, 'createObjectivePolicy', 201, { document: { ...POLICY, max_tokens: 5000 } });
      assert.equal(second.version, 2);
      await call(ctx, 'post', `/v1/objectives/${id}/policies/2/approve`, 'approveObjectivePolicy', 200, { hash: second.hash });
      const versions = await call(ctx, 'get', `/v1/objectives/${id}/policies`, 'listObjectivePolicies', 200);
      assert.deepEqual(
        versions.data.map((p: Json) => [p.version, p.status]),
        [
          [2, 'approved'],
          [1, 'superseded'],
        ],
      );
      assertProblem(await send(ctx, 'post', `/v1/objectives/${id}/policies/1/approve`, { hash: draft.hash }), 409, 'conflict');
      assertProblem(await send(ctx, 'post', `/v1/objectives/${id}/policies/9/approve`, { hash: draft.hash }), 404, 'not-found');
    });

    test('a policy document with unknown fields, over 64 KiB, bad quiet hours, an unknown zone or a past expiry is refused', async () => {
      const { id } = await objective(ctx);
      for (const [document, pointer] of [
        [{ ...POLICY, spend: 'all of it' }, '/document'],
        [{ ...POLICY, quiet_hours: '22:00-07:00' }, '/document/quiet_hours'],
        [{ ...POLICY, quiet_hours: '25-07' }, '/document/quiet_hours'],
        [{ ...POLICY, timezone: 'Mars/Olympus' }, '/document/timezone'],
        [{ ...POLICY, expires_at: 1_000_000 }, '/document/expires_at'],
        [{ ...POLICY, consequence_classes: ['everything'] }, '/document/consequence_classes/0'],
        [{ ...POLICY, mcp_tools: Array.from({ length: 256 }, (_, i) => `server/tool_${i}_${'y'.repeat(240)}`) }, '/document'],
        [{ ...POLICY, allowed_tools: ['http.post'] }, '/document/allowed_tools/0'],
      ] as const) {
        const res = await send(ctx, 'post', `/v1/objectives/${id}/policies`, { document });
        assertProblem(res, 400, 'validation-failed');
        assert.ok(JSON.stringify(res.body.errors).includes(pointer), `${pointer}: ${res.text}`);
      }
      assert.deepEqual((await call(ctx, 'get', `/v1/objectives/${id}/policies`, 'listObjectivePolicies', 200)).data, []);
    });

    test('a schedule is checked at once: cron, zone, end, catch-up limits and the minimum interval', async () => {
      const { id } = await objective(ctx);
      const path = `/v1/objectives/${id}/schedules`;
      for (const [body, pointer] of [
        [{ cron: '61 * * * *' }, '/cron'],
        [{ cron: 'every morning' }, '/cron'],
        [{ cron: '0 9 * * 1-5', timezone: 'Europe/Atlantis' }, '/timezone'],
        [{ cron: '0 9 * * 1-5', end_at: 1_000_000 }, '/end_at'],
        [{ cron: '0 9 * * 1-5', max_catch_up: 101 }, '/max_catch_up'],
        [{ cron: '0 9 * * 1-5', catchup_window_seconds: 31_536_001 }, '/catchup_window_seconds'],
        [{ cron: '* * * * * *' }, '/cron'],
      ] as const) {
        const res = await send(ctx, 'post', path, body);
        assertProblem(res, 400, 'validation-failed');
        assert.ok(JSON.stringify(res.body.errors).includes(pointer), `${pointer}: ${res.text}`);
      }
      assertProblem(await send(ctx, 'post', `/v1/objectives/obj_nope/schedules`, { cron: '0 9 * * *' }), 404, 'not-found');
      const paris = await call(ctx, 'post', path, 'createObjectiveSchedule', 201, { cron: '0 9 * * 1-5', timezone: 'Europe/Paris' });
      assert.equal(paris.kind, 'cron');
      assert.equal(paris.missed_run_policy, 'run_once');
      assert.equal(new Date(paris.next_due_at * 1000).toLocaleString('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' }), '09:00');
      const triggers = await call(ctx, 'get', `/v1/objectives/${id}/triggers`, 'listObjectiveTriggers', 200);
      assert.deepEqual(
        triggers.data.map((t: Json) => t.id),
        [paris.id],
      );
      await call(ctx, 'delete', `${path}/${paris.id}`, 'deleteObjectiveSchedule', 200);
      assertProblem(await send(ctx, 'delete', `${path}/${paris.id}`), 404, 'not-found');
    });

    test('without an approved policy the trigger fires, no response exists, the wake is skipped and the objective blocked; approval lets the next run', async () => {
      const { id } = await objective(ctx);
      const trigger = await call(ctx, 'post', `/v1/objectives/${id}/schedules`, 'createObjectiveSchedule', 201, { cron: '*/2 * * * * *' });
      await untilDue(ctx, trigger);
      await tick(ctx);
      const skipped = await wakes(ctx, id);
      assert.ok(skipped.length >= 1);
      // A tick late by a whole period (a loaded machine) records the older one missed: no grace here.
      assert.ok(skipped.some((w) => w.reason === 'no-approved-policy'));
      assert.ok(
        skipped.every((w) => w.outcome === 'skipped' && ['no-approved-policy', 'missed'].includes(w.reason) && w.response_id === null),
        JSON.stringify(skipped),
      );
      assert.deepEqual(await responsesOf(ctx, id), []);
      assert.equal((await call(ctx, 'get', `/v1/objectives/${id}`, 'getObjective', 200)).status, 'blocked');
      const listed = (await call(ctx, 'get', `/v1/objectives/${id}/triggers`, 'listObjectiveTriggers', 200)).data[0];
      assert.equal(listed.skipped_count, skipped.length);
      assert.ok(['no-approved-policy', 'missed'].includes(listed.last_skip_reason));
      assert.ok(listed.next_due_at > skipped[0].due_at);

      const policy = await approvedPolicy(ctx, id);
      await untilDue(ctx, listed);
      await tick(ctx);
      const admitted = await until('a wake admitted', async () => (await wakes(ctx, id)).find((w) => w.outcome === 'admitted'));
      const [response] = await responsesOf(ctx, id);
      assert.equal(admitted.response_id, response.id);
      assert.equal(response.metadata.palai_objective, id);
      assert.equal(response.metadata.palai_trigger, trigger.id);
      assert.equal(response.metadata.palai_policy, policy.hash);
      assert.equal(new Date(response.metadata.palai_due_at).getTime(), admitted.due_at * 1000);
      const text = JSON.stringify(response.input);
      assert.ok(text.includes('Check the deploy; open an issue when it is red.'), text);
      assert.ok(text.includes(policy.hash), text);
      assert.ok(text.includes(`the schedule \\"*/2 * * * * *\\"`), text);
      const settled = await until('the wake answered', async () => {
        const got = await call(ctx, 'get', `/v1/responses/${response.id}`, 'getResponse', 200);
        return got.status === 'completed' && got;
      });
      assert.equal(settled.metadata.palai_objective, id);
      const active = await call(ctx, 'get', `/v1/objectives/${id}`, 'getObjective', 200);
      assert.equal(active.status, 'active');
      assert.equal(active.last_wake_response_id, response.id);
      assert.equal(active.session_id, settled.conversation?.id ?? active.session_id);
      await call(ctx, 'delete', `/v1/objectives/${id}`, 'deleteObjective', 200);
    });

    test('a revoked or expired policy stops the next wake', async () => {
      const revoked = await objective(ctx);
      const policy = await approvedPolicy(ctx, revoked.id);
      await call(ctx, 'post', `/v1/objectives/${revoked.id}/policies/${policy.version}/revoke`, 'revokeObjectivePolicy', 200);
      assert.match((await call(ctx, 'get', `/v1/objectives/${revoked.id}`, 'getObjective', 200)).blocked_reason, /^policy-revoked/);
      const wake = await call(ctx, 'post', `/v1/objectives/${revoked.id}/wake`, 'wakeObjective', 201, {});
      assert.equal(wake.outcome, 'skipped');
      assert.equal(wake.reason, 'policy-revoked');

      const expiring = await objective(ctx);
      const soon = Math.floor(Date.now() / 1000) + 2;
      await approvedPolicy(ctx, expiring.id, { ...POLICY, expires_at: soon });
      await untilStorePasses(ctx().hub.kernel.db, new Date(soon * 1000), 'the policy expired');
      const late = await call(ctx, 'post', `/v1/objectives/${expiring.id}/wake`, 'wakeObjective', 201, {});
      assert.equal(late.reason, 'policy-expired');
      const blocked = await call(ctx, 'get', `/v1/objectives/${expiring.id}`, 'getObjective', 200);
      assert.equal(blocked.status, 'blocked');
      assert.match(blocked.blocked_reason, /^policy-expired/);
      assert.deepEqual(await responsesOf(ctx, revoked.id), []);
      assert.deepEqual(await responsesOf(ctx, expiring.id), []);
    });

    test('a manual wake under an Idempotency-Key is one wake; a second while it runs is skipped as overlap', async () => {
      const slow = await agent(ctx, STUCK_AGENT);
      const { id } = await objective(ctx, { agent: slow });
      await approvedPolicy(ctx, id);
      const key = { 'Idempotency-Key': `wake-${id}` };
      const first = await call(ctx, 'post', `/v1/objectives/${id}/wake`, 'wakeObjective', 201, { reason: 'the deploy was re-run' }, key);
      assert.equal(first.outcome, 'admitted');
      assert.deepEqual(await call(ctx, 'post', `/v1/objectives/${id}/wake`, 'wakeObjective', 201, { reason: 'the deploy was re-run' }, key), first);
      const second = await call(ctx, 'post', `/v1/objectives/${id}/wake`, 'wakeObjective', 201, {});
      assert.equal(second.outcome, 'skipped');
      assert.equal(second.reason, 'overlap');
      const responses = await responsesOf(ctx, id);
      assert.deepEqual(
        responses.map((r) => r.id),
        [first.response_id],
      );
      assert.ok(JSON.stringify(responses[0].input).includes('the deploy was re-run'));

      // The kill switch: pausing cancels the running wake and admits none while paused.
      const paused = await call(ctx, 'patch', `/v1/objectives/${id}`, 'updateObjective', 200, { status: 'paused' });
      assert.equal(paused.status, 'paused');
      const canceled = await until('the wake cancelled', async () => {
        const got = await call(ctx, 'get', `/v1/responses/${first.response_id}`, 'getResponse', 200);
        return got.status === 'cancelled' || got.status === 'canceled' ? got : null;
      });
      assert.ok(canceled);
      assertProblem(await send(ctx, 'post', `/v1/objectives/${id}/wake`, {}), 409, 'conflict');
      const resumed = await call(ctx, 'patch', `/v1/objectives/${id}`, 'updateObjective', 200, { status: 'active' });
      assert.equal(resumed.status, 'active');
      assertProblem(await send(ctx, 'patch', `/v1/objectives/${id}`, { status: 'blocked' }), 400, 'validation-failed');
      await call(ctx, 'patch', `/v1/objectives/${id}`, 'updateObjective', 200, { status: 'abandoned' });
      assertProblem(await send(ctx, 'patch', `/v1/objectives/${id}`, { status: 'active' }), 409, 'conflict');
      assertProblem(await send(ctx, 'post', `/v1/objectives/${id}/wake`, {}), 409, 'conflict');
    });

    test("another project's objectives are not found", async () => {
      const { id } = await objective(ctx);
      const other = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
      for (const [method, path] of [
        ['get', `/v1/objectives/${id}`],
        ['post', `/v1/objectives/${id}/wake`],
        ['get', `/v1/objectives/${id}/wakes`],
        ['delete', `/v1/objectives/${id}`],
      ] as const) {
        const res = await ctx().http[method](path).set(other).send({});
        assertProblem(res, 404, 'not-found');
      }
    });
  },
  { minScheduleSeconds: 2, schedulerIntervalMs: 60_000, scheduleGraceSeconds: 0 },
);
