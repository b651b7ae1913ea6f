// The missed-run policies as a pure plan over a trigger's due occurrences:
// which fire, which are recorded and why, and where the trigger goes next —
// including the bound on one tick, end_at, one-shot triggers and a DST change.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_OCCURRENCES_PER_TICK, planTrigger } from '../../core/surfaces/autonomy/occurrences.js';
import type { TriggerRow } from '../../core/surfaces/autonomy/objective-views.js';

const at = (iso: string) => new Date(iso);

function trigger(overrides: Partial<TriggerRow>): TriggerRow {
  return {
    id: 'trg_x',
    objective_id: 'obj_x',
    project_id: 'prj_x',
    kind: 'cron',
    cron: '0 * * * *',
    timezone: 'UTC',
    end_at: null,
    missed_run_policy: 'run_once',
    catchup_window_seconds: 86_400,
    max_catch_up: 10,
    status: 'enabled',
    next_due_at: at('2026-12-01T00:00:00Z'),
    last_fired_at: null,
    skipped_count: 0,
    caught_up: 0,
    last_skip_reason: null,
    reason: null,
    created_by_call: null,
    created_at: at('2026-11-30T00:00:00Z'),
    ...overrides,
  };
}

const iso = (dates: Date[]) => dates.map((d) => d.toISOString().slice(11, 16));

test('an occurrence taken within the grace fires, whatever the policy', () => {
  for (const policy of ['skip', 'run_once', 'catch_up'] as const) {
    const plan = planTrigger(trigger({ missed_run_policy: policy }), at('2026-12-01T00:00:05Z'), 10);
    assert.deepEqual(iso(plan.fire.map((f) => f.dueAt)), ['00:00']);
    assert.deepEqual(plan.skip, []);
    assert.equal(plan.next?.toISOString(), '2026-12-01T01:00:00.000Z');
  }
});

test('nothing due: nothing fires and the next due time stays', () => {
  const plan = planTrigger(trigger({}), at('2026-11-30T23:59:00Z'), 10);
  assert.deepEqual(plan, { fire: [], skip: [], next: at('2026-12-01T00:00:00Z'), more: false });
});

test('after five hours down: skip records all, run_once fires the newest, catch_up the oldest up to its cap', () => {
  const now = at('2026-12-01T04:30:00Z');
  const skip = planTrigger(trigger({ missed_run_policy: 'skip' }), now, 10);
  assert.deepEqual(skip.fire, []);
  assert.deepEqual(iso(skip.skip.map((s) => s.dueAt)), ['00:00', '01:00', '02:00', '03:00', '04:00']);
  assert.ok(skip.skip.every((s) => s.reason === 'missed'));
  assert.equal(skip.next?.toISOString(), '2026-12-01T05:00:00.000Z');

  const once = planTrigger(trigger({}), now, 10);
  assert.deepEqual(iso(once.fire.map((f) => f.dueAt)), ['04:00']);
  assert.ok(once.fire[0].catchUp);
  assert.deepEqual(iso(once.skip.map((s) => s.dueAt)), ['00:00', '01:00', '02:00', '03:00']);

  const caught = planTrigger(trigger({ missed_run_policy: 'catch_up', max_catch_up: 3 }), now, 10);
  assert.deepEqual(iso(caught.fire.map((f) => f.dueAt)), ['00:00', '01:00', '02:00']);
  assert.deepEqual(
    caught.skip.map((s) => [s.dueAt.toISOString().slice(11, 16), s.reason]),
    [
      ['03:00', 'catch-up-cap'],
      ['04:00', 'catch-up-cap'],
    ],
  );
  const windowed = planTrigger(trigger({ missed_run_policy: 'catch_up', catchup_window_seconds: 7200 }), now, 10);
  assert.deepEqual(iso(windowed.fire.map((f) => f.dueAt)), ['03:00', '04:00']);
  assert.deepEqual(iso(windowed.skip.map((s) => s.dueAt)), ['00:00', '01:00', '02:00']);
});

test('run_once with one on time fires that one and records the missed', () => {
  const plan = planTrigger(trigger({ cron: '*/10 * * * * *', next_due_at: at('2026-12-01T00:00:00Z') }), at('2026-12-01T00:00:32Z'), 5);
  assert.deepEqual(
    plan.fire.map((f) => [f.dueAt.toISOString().slice(17, 19), f.catchUp]),
    [['30', false]],
  );
  assert.deepEqual(
    plan.skip.map((s) => s.dueAt.toISOString().slice(17, 19)),
    ['00', '10', '20'],
  );
});

test('one tick takes at most its bound; run_once leaves the one wake to the tick that reaches the newest', () => {
  const t = trigger({ cron: '* * * * * *', next_due_at: at('2026-12-01T00:00:00Z') });
  const now = at('2026-12-01T01:00:00Z');
  const plan = planTrigger(t, now, 10);
  assert.equal(plan.fire.length + plan.skip.length, MAX_OCCURRENCES_PER_TICK);
  assert.deepEqual(plan.fire, []);
  assert.ok(plan.next && plan.next <= now);
  // The tick that reaches the newest (every one late, with no grace) fires it alone.
  const last = planTrigger({ ...t, next_due_at: at('2026-12-01T00:59:00Z') }, at('2026-12-01T01:00:00.500Z'), 0);
  assert.deepEqual(
    last.fire.map((f) => [f.dueAt.toISOString(), f.catchUp]),
    [['2026-12-01T01:00:00.000Z', true]],
  );
  assert.equal(last.skip.length, 60);
});

test('end_at stops the trigger; a one-shot trigger fires once and is done', () => {
  const ended = planTrigger(trigger({ end_at: at('2026-12-01T02:30:00Z') }), at('2026-12-01T04:30:00Z'), 10);
  assert.deepEqual(iso(ended.fire.map((f) => f.dueAt)), ['02:00']);
  assert.equal(ended.next, null);
  const once = planTrigger(trigger({ kind: 'once', cron: null, next_due_at: at('2026-12-01T00:00:00Z') }), at('2026-12-01T00:00:01Z'), 10);
  assert.deepEqual(iso(once.fire.map((f) => f.dueAt)), ['00:00']);
  assert.equal(once.next, null);
});

test('catch_up keeps its cap across the ticks one downtime takes', () => {
  const t = trigger({ missed_run_policy: 'catch_up', max_catch_up: 3 });
  const now = at('2026-12-01T04:30:00Z');
  assert.equal(planTrigger({ ...t, caught_up: 2 }, now, 10).fire.length, 1);
  assert.equal(planTrigger({ ...t, caught_up: 3 }, now, 10).fire.length, 0);
  assert.ok(planTrigger({ ...t, caught_up: 3 }, now, 10).skip.every((s) => s.reason === 'catch-up-cap'));
});

test('times the autumn DST change repeats wake once each', () => {
  // Paris goes from 03:00 CEST back to 02:00 CET on 2026-10-25: 02:00 and 02:30 happen twice.
  const plan = planTrigger(
    trigger({ cron: '0,30 2 * * *', timezone: 'Europe/Paris', missed_run_policy: 'skip', next_due_at: at('2026-10-25T00:00:00Z') }),
    at('2026-10-25T03:00:00Z'),
    10,
  );
  assert.deepEqual(
    plan.skip.map((s) => s.dueAt.toISOString()),
    ['2026-10-25T00:00:00.000Z', '2026-10-25T00:30:00.000Z'],
  );
  assert.equal(plan.next?.toISOString(), '2026-10-26T01:00:00.000Z');
  // Hourly in New York: 01:00 once on 2026-11-01, though the clock shows it twice.
  const hourly = planTrigger(
    trigger({ cron: '0 * * * *', timezone: 'America/New_York', missed_run_policy: 'skip', next_due_at: at('2026-11-01T04:00:00Z') }),
    at('2026-11-01T08:30:00Z'),
    10,
  );
  assert.deepEqual(
    hourly.skip.map((s) => new Date(s.dueAt).toLocaleTimeString('en-US', { timeZone: 'America/New_York', hour12: false })),
    ['00:00:00', '01:00:00', '02:00:00', '03:00:00'],
  );
});

test('a local time the spring DST change skips is one occurrence', () => {
  // 02:30 does not exist in Paris on 2027-03-28: one occurrence, at the next valid time.
  const plan = planTrigger(trigger({ cron: '30 2 * * *', timezone: 'Europe/Paris', next_due_at: at('2027-03-27T01:30:00Z') }), at('2027-03-29T12:00:00Z'), 10);
  assert.equal(plan.fire.length + plan.skip.length, 3);
});
