// Missed runs, overlap and the wake tools, on both stores, with the
// scheduler's ticks the test's own: a trigger put back in time is what a hub
// down that long finds; each missed-run policy takes it its own way, and
// exactly one wake per occurrence is ever recorded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachStore, withSlice, type TestHub } from '../support/hub.js';
import { until, untilStorePasses } from '../support/until.js';
import { agent, approvedPolicy, backdate, call, objective, ownTicks, STUCK_AGENT, wakes, type Json } from './objectives-support.js';

const tick = (ctx: () => TestHub) => withSlice(ctx().hub, 'autonomy').scheduler.tick();

/** An objective with an approved policy and one schedule, paused while the schedule is put `seconds` back. */
async function downFor(ctx: () => TestHub, seconds: number, schedule: Json, body: Json = {}): Promise<{ id: string; trigger: Json }> {
  const { id } = await objective(ctx, body);
  await approvedPolicy(ctx, id);
  await call(ctx, 'patch', `/v1/objectives/${id}`, 'updateObjective', 200, { status: 'paused' });
  const trigger = await call(ctx, 'post', `/v1/objectives/${id}/schedules`, 'createObjectiveSchedule', 201, { cron: '*/2 * * * * *', ...schedule });
  await backdate(ctx, id, seconds);
  await call(ctx, 'patch', `/v1/objectives/${id}`, 'updateObjective', 200, { status: 'active' });
  return { id, trigger };
}

const byOutcome = (list: Json[]) => ({
  admitted: list.filter((w) => w.outcome === 'admitted'),
  skipped: list.filter((w) => w.outcome === 'skipped'),
});

describeEachStore(
  'missed runs and overlap',
  (ctx) => {
    ownTicks(ctx);

    test('skip records every missed occurrence and admits none', async () => {
      const { id } = await downFor(ctx, 12, { missed_run_policy: 'skip' });
      await tick(ctx);
      const { admitted, skipped } = byOutcome(await wakes(ctx, id));
      assert.equal(admitted.length, 0);
      assert.ok(skipped.length >= 6, JSON.stringify(skipped));
      assert.ok(skipped.every((w) => w.reason === 'missed'));
      // One record per occurrence, two seconds apart.
      const due = skipped.map((w) => w.due_at).sort((a, b) => a - b);
      due.slice(1).forEach((d, i) => assert.equal(d - due[i], 2));
    });

    test('run_once admits one wake for all the missed occurrences', async () => {
      const { id } = await downFor(ctx, 12, {});
      await tick(ctx);
      const { admitted, skipped } = byOutcome(await wakes(ctx, id));
      assert.equal(admitted.length, 1);
      assert.ok(skipped.length >= 5);
      assert.ok(skipped.every((w) => w.reason === 'missed' && w.due_at < admitted[0].due_at));
    });

    test('catch_up admits each missed occurrence up to its cap and records the rest', async () => {
      const { id } = await downFor(ctx, 12, { missed_run_policy: 'catch_up', max_catch_up: 3 });
      await tick(ctx);
      const { admitted, skipped } = byOutcome(await wakes(ctx, id));
      assert.equal(admitted.length, 3);
      assert.ok(skipped.length >= 3);
      assert.ok(skipped.every((w) => w.reason === 'catch-up-cap'));
      // The oldest are caught up: every admitted one is due before every capped one.
      assert.ok(Math.max(...admitted.map((w) => w.due_at)) < Math.min(...skipped.map((w) => w.due_at)));
      const { rows } = await ctx().hub.kernel.db.query<{ n: string }>("SELECT count(*) AS n FROM responses WHERE metadata ->> 'palai_objective' = $1", [id]);
      assert.equal(Number(rows[0].n), 3);
    });

    test('a catch-up window leaves what is older than it missed', async () => {
      const { id } = await downFor(ctx, 20, { missed_run_policy: 'catch_up', max_catch_up: 100, catchup_window_seconds: 9 });
      await tick(ctx);
      const { admitted, skipped } = byOutcome(await wakes(ctx, id));
      assert.ok(admitted.length >= 4 && admitted.length <= 5, JSON.stringify(admitted));
      assert.ok(skipped.length >= 5 && skipped.every((w) => w.reason === 'missed'));
    });

    test('ticks racing take each occurrence once', async () => {
      const { id } = await downFor(ctx, 12, { missed_run_policy: 'catch_up', max_catch_up: 100 });
      await Promise.all([tick(ctx), tick(ctx), tick(ctx)]);
      const list = await wakes(ctx, id);
      assert.equal(new Set(list.map((w) => `${w.trigger_id}@${w.due_at}`)).size, list.length);
      const { rows } = await ctx().hub.kernel.db.query<{ n: string }>("SELECT count(*) AS n FROM responses WHERE metadata ->> 'palai_objective' = $1", [id]);
      assert.equal(Number(rows[0].n), byOutcome(list).admitted.length);
    });

    test('while a wake waits for input later occurrences are skipped; buffer_one keeps one for when a wake ends', async () => {
      const asking = await agent(ctx, {
        tools: [{ type: 'builtin', name: 'ask_user' }],
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Is the deploy allowed?' } }] }, { text: 'thanks' }] },
      });
      const { id } = await objective(ctx, { agent: asking });
      await approvedPolicy(ctx, id);
      const first = await call(ctx, 'post', `/v1/objectives/${id}/wake`, 'wakeObjective', 201, {});
      await until(
        'the wake asks',
        async () => (await call(ctx, 'get', `/v1/responses/${first.response_id}`, 'getResponse', 200)).palai_status === 'waiting_for_input',
      );
      const second = await call(ctx, 'post', `/v1/objectives/${id}/wake`, 'wakeObjective', 201, {});
      assert.equal(second.reason, 'waiting-for-input');

      const slow = await agent(ctx, STUCK_AGENT);
      const buffered = await objective(ctx, { agent: slow, overlap: 'buffer_one' });
      await approvedPolicy(ctx, buffered.id);
      const running = await call(ctx, 'post', `/v1/objectives/${buffered.id}/wake`, 'wakeObjective', 201, {});
      assert.equal(running.outcome, 'admitted');
      // catch_up: with no grace here every occurrence is late, and each is to be taken on its own.
      const trigger = await call(ctx, 'post', `/v1/objectives/${buffered.id}/schedules`, 'createObjectiveSchedule', 201, {
        cron: '*/2 * * * * *',
        missed_run_policy: 'catch_up',
      });
      await untilStorePasses(ctx().hub.kernel.db, new Date(trigger.next_due_at * 1000 + 2000), 'two occurrences due');
      await tick(ctx);
      // The first due while the wake runs is buffered (no record yet), the next skipped.
      const during = await wakes(ctx, buffered.id);
      assert.ok(
        during.some((w) => w.reason === 'overlap'),
        JSON.stringify(during),
      );
      // The running wake ends (cancelled here): the buffered occurrence is admitted after it.
      await call(ctx, 'post', `/v1/responses/${running.response_id}/cancel`, 'cancelResponse', 200);
      await until('the buffered occurrence admitted', async () => {
        await tick(ctx);
        return (await wakes(ctx, buffered.id)).find((w) => w.outcome === 'admitted' && w.trigger_id === trigger.id && w.due_at === trigger.next_due_at);
      });
    });

    test('a one-shot wake due while a wake runs waits for it; pausing gives up a buffered occurrence, recorded', async () => {
      const stuck = await agent(ctx, STUCK_AGENT);
      const { id } = await objective(ctx, { agent: stuck, overlap: 'buffer_one' });
      await approvedPolicy(ctx, id);
      const running = await call(ctx, 'post', `/v1/objectives/${id}/wake`, 'wakeObjective', 201, {});
      const calls = withSlice(ctx().hub, 'autonomy').objectiveCalls;
      const once = await calls.scheduleWake(id, { responseId: running.response_id, callId: 'call_again', afterSeconds: 1, reason: 'look again' });
      await untilStorePasses(ctx().hub.kernel.db, new Date((once.next_due_at ?? 0) * 1000 + 500), 'the one-shot wake due');
      await tick(ctx);
      const deferred = (await call(ctx, 'get', `/v1/objectives/${id}/triggers`, 'listObjectiveTriggers', 200)).data.find((t: Json) => t.id === once.id);
      assert.equal(deferred.status, 'enabled');
      assert.equal(deferred.next_due_at, once.next_due_at);
      assert.ok(!(await wakes(ctx, id)).some((w) => w.trigger_id === once.id));

      const schedule = await call(ctx, 'post', `/v1/objectives/${id}/schedules`, 'createObjectiveSchedule', 201, {
        cron: '*/2 * * * * *',
        missed_run_policy: 'catch_up',
      });
      await untilStorePasses(ctx().hub.kernel.db, new Date(schedule.next_due_at * 1000), 'the schedule due');
      await tick(ctx);
      await call(ctx, 'patch', `/v1/objectives/${id}`, 'updateObjective', 200, { status: 'paused' });
      const record = (await wakes(ctx, id)).find((w) => w.trigger_id === schedule.id && w.due_at === schedule.next_due_at);
      assert.deepEqual([record?.outcome, record?.reason], ['skipped', 'paused']);
      // The pause committed the running wake's cancel; its worker stops it at its next look (a NOTIFY away).
      await until(
        'the running wake canceled',
        async () => (await call(ctx, 'get', `/v1/responses/${running.response_id}`, 'getResponse', 200)).palai_status === 'canceled',
      );

      await call(ctx, 'delete', `/v1/objectives/${id}/schedules/${schedule.id}`, 'deleteObjectiveSchedule', 200);
      await call(ctx, 'patch', `/v1/objectives/${id}`, 'updateObjective', 200, { status: 'active' });
      const admitted = await until('the one-shot wake admitted once nothing runs', async () => {
        await tick(ctx);
        return (await wakes(ctx, id)).find((w) => w.trigger_id === once.id);
      });
      assert.equal(admitted.outcome, 'admitted');
      assert.equal(admitted.due_at, once.next_due_at);
    });

    test('a wake the kernel refuses for good is recorded admission-refused, blocks the objective, and nothing is tried again until a person resumes it', async () => {
      const watcher = await agent(ctx);
      const session = await call(ctx, 'post', '/v1/sessions', 'createSession', 201, { agent: watcher });
      const { id } = await objective(ctx, { agent: watcher, session: session.id });
      await approvedPolicy(ctx, id);
      const trigger = await call(ctx, 'post', `/v1/objectives/${id}/schedules`, 'createObjectiveSchedule', 201, { cron: '*/2 * * * * *' });
      await call(ctx, 'delete', `/v1/sessions/${session.id}`, 'deleteSession', 200);
      await untilStorePasses(ctx().hub.kernel.db, new Date(trigger.next_due_at * 1000), 'the schedule due');
      await tick(ctx);
      const refused = await wakes(ctx, id);
      assert.ok(refused.length >= 1 && refused.every((w) => w.outcome === 'skipped' && w.reason === 'admission-refused'), JSON.stringify(refused));
      const blocked = await call(ctx, 'get', `/v1/objectives/${id}`, 'getObjective', 200);
      assert.equal(blocked.status, 'blocked');
      assert.match(blocked.blocked_reason, /^admission-refused: /);
      // It waits for a person: later occurrences are not tried (nor recorded) meanwhile.
      await untilStorePasses(ctx().hub.kernel.db, new Date(trigger.next_due_at * 1000 + 2500), 'another occurrence due');
      await tick(ctx);
      assert.equal((await wakes(ctx, id)).length, refused.length);
      assert.equal((await call(ctx, 'patch', `/v1/objectives/${id}`, 'updateObjective', 200, { status: 'active' })).status, 'active');
    });
  },
  { minScheduleSeconds: 1, schedulerIntervalMs: 60_000, scheduleGraceSeconds: 0 },
);
