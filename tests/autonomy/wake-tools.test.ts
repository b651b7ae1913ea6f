// The tools of a wake, on both stores: schedule_wake makes a one-shot trigger
// owned by its call (a call run again makes no second one) whose wake is told
// the reason; complete_objective ends the objective; the policy narrows the
// agent's tools and limits for each wake; responses that are not wakes get none
// of these tools.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachStore, withSlice, type TestHub } from '../support/hub.js';
import { until, untilStorePasses } from '../support/until.js';
import { agent, approvedPolicy, call, objective, POLICY, wakes, type Json } from './objectives-support.js';

const tick = (ctx: () => TestHub) => withSlice(ctx().hub, 'autonomy').scheduler.tick();

const settled = (ctx: () => TestHub, id: string) =>
  until(`response ${id} ended`, async () => {
    const got = await call(ctx, 'get', `/v1/responses/${id}`, 'getResponse', 200);
    return ['completed', 'failed', 'incomplete', 'cancelled'].includes(got.status) && got;
  });

describeEachStore(
  'wake tools',
  (ctx) => {
    test('schedule_wake brings the objective back with the reason; complete_objective ends it', async () => {
      const watcher = await agent(ctx, {
        model: {
          provider: 'fake',
          script: [
            { tool_calls: [{ name: 'schedule_wake', arguments: { after_seconds: 2, reason: 'poll the job' } }] },
            { text: 'I will look again.' },
            { tool_calls: [{ name: 'complete_objective', arguments: { evidence: 'the job finished green' } }] },
            { text: 'Done.' },
          ],
        },
      });
      const { id } = await objective(ctx, { agent: watcher });
      await approvedPolicy(ctx, id);
      const first = await call(ctx, 'post', `/v1/objectives/${id}/wake`, 'wakeObjective', 201, {});
      const ran = await settled(ctx, first.response_id);
      assert.equal(ran.status, 'completed', JSON.stringify(ran.error));
      const once = (await call(ctx, 'get', `/v1/objectives/${id}/triggers`, 'listObjectiveTriggers', 200)).data.find((t: Json) => t.kind === 'once');
      assert.equal(once.reason, 'poll the job');
      const made = new Date(ran.created_at * 1000).getTime();
      assert.ok(once.next_due_at * 1000 >= made && once.next_due_at * 1000 <= Date.now() + 3000, JSON.stringify(once));

      await untilStorePasses(ctx().hub.kernel.db, new Date(once.next_due_at * 1000 + 1000), 'the one-shot wake due');
      await tick(ctx);
      const second = await until('the one-shot wake admitted', async () =>
        (await wakes(ctx, id)).find((w) => w.trigger_id === once.id && w.outcome === 'admitted'),
      );
      const { rows } = await ctx().hub.kernel.db.query<{ input: unknown }>('SELECT input FROM responses WHERE id = $1', [second.response_id]);
      assert.ok(JSON.stringify(rows[0].input).includes('you asked to come back') && JSON.stringify(rows[0].input).includes('poll the job'));
      assert.equal((await settled(ctx, second.response_id)).status, 'completed');
      const done = await call(ctx, 'get', `/v1/objectives/${id}`, 'getObjective', 200);
      assert.equal(done.status, 'completed');
      assert.equal(done.completed_evidence, 'the job finished green');
      const triggers = (await call(ctx, 'get', `/v1/objectives/${id}/triggers`, 'listObjectiveTriggers', 200)).data;
      assert.ok(triggers.every((t: Json) => t.status === 'done'));
    });

    test('a schedule_wake call run again finds the trigger it made', async () => {
      const { id } = await objective(ctx);
      await approvedPolicy(ctx, id);
      const calls = withSlice(ctx().hub, 'autonomy').objectiveCalls;
      const call1 = { responseId: 'resp_crashed', callId: 'call_1', afterSeconds: 60, reason: 'again' };
      const [a, b] = [await calls.scheduleWake(id, call1), await calls.scheduleWake(id, call1)];
      assert.equal(a.id, b.id);
      assert.equal(a.next_due_at, b.next_due_at);
      const { rows } = await ctx().hub.kernel.db.query<{ n: string }>(
        "SELECT count(*) AS n FROM objective_triggers WHERE created_by_call = 'resp_crashed:call_1'",
      );
      assert.equal(Number(rows[0].n), 1);
      await assert.rejects(calls.scheduleWake(id, { ...call1, callId: 'call_2', afterSeconds: undefined }), /exactly one/);
      await assert.rejects(calls.scheduleWake(id, { ...call1, callId: 'call_3', afterSeconds: 400 * 24 * 3600 }), /at most/);
    });

    test("the policy narrows a wake's tools and limits; a response that is not a wake has no wake tools", async () => {
      const tooled = await agent(ctx, {
        tools: [
          { type: 'builtin', name: 'current_time' },
          { type: 'builtin', name: 'echo' },
        ],
        limits: { max_total_tokens: 1_000_000, timeout_seconds: 3600 },
      });
      const { id } = await objective(ctx, { agent: tooled });
      await approvedPolicy(ctx, id, { ...POLICY, allowed_tools: ['current_time'], max_tokens: 50_000, max_seconds: 120 });
      const wake = await call(ctx, 'post', `/v1/objectives/${id}/wake`, 'wakeObjective', 201, {});
      const { rows } = await ctx().hub.kernel.db.query<{ options: Json; deadline_in: number }>(
        'SELECT options, extract(epoch FROM deadline_at - created_at)::int AS deadline_in FROM responses WHERE id = $1',
        [wake.response_id],
      );
      assert.deepEqual(rows[0].options.limits, { max_total_tokens: 50_000, timeout_seconds: 120 });
      assert.ok(rows[0].options.allowed_tools.includes('current_time') && !rows[0].options.allowed_tools.includes('echo'));
      assert.ok(rows[0].deadline_in <= 120);
      assert.equal((await settled(ctx, wake.response_id)).status, 'completed');

      // An agent may list the wake tools itself: outside a wake they are nothing, and the run goes on.
      const listing = await agent(ctx, { tools: [{ type: 'objective' }, { type: 'builtin', name: 'echo' }] });
      const plain = await call(ctx, 'post', '/v1/responses', 'createResponse', 200, { model: listing, input: 'hello' });
      assert.equal(plain.palai_status, 'completed', JSON.stringify(plain.error));
      const calls = withSlice(ctx().hub, 'autonomy').objectiveCalls;
      assert.equal(await calls.objectiveOf(ctx().projectId, plain.id), null);
      assert.equal(await calls.objectiveOf(ctx().projectId, wake.response_id), id);
      const provider = ctx().hub.kernel.tools.get('objective');
      const resolve = (responseId: string) =>
        provider.resolve({ type: 'objective' }, { projectId: ctx().projectId, responseId, egress: ctx().hub.kernel.egress });
      assert.deepEqual(await resolve(plain.id), []);
      assert.deepEqual(
        (await resolve(wake.response_id)).map((t) => t.name),
        ['schedule_wake', 'complete_objective'],
      );
    });
  },
  { minScheduleSeconds: 1, schedulerIntervalMs: 60_000, scheduleGraceSeconds: 0 },
);
