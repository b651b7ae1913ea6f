// A scheduler killed between its claim and its commit, on both stores: the
// tick's transaction fails at its very end, after every wake, record and next
// due time was written in it — and nothing of it is left. The next tick, of
// any process, takes the same occurrences once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAutonomyApi } from '../../core/surfaces/autonomy/create-autonomy-api.js';
import type { Db, Queryable } from '../../core/store/db.js';
import { describeEachStore } from '../support/hub.js';
import { approvedPolicy, backdate, call, objective, ownTicks, wakes } from './objectives-support.js';

/** The hub's store, except that a transaction which wrote a wake record fails instead of committing: a process killed there. */
function killedBeforeCommit(db: Db): Db & { killed: number } {
  const faulty = Object.create(db) as Db & { killed: number };
  faulty.killed = 0;
  faulty.transaction = <T>(work: (tx: Queryable) => Promise<T>) =>
    db.transaction(async (tx) => {
      let wroteWake = false;
      const watched: Queryable = {
        query: (sql, params) => {
          if (/^\s*INSERT INTO objective_wakes/.test(sql)) wroteWake = true;
          return tx.query(sql, params);
        },
        exec: (sql) => tx.exec(sql),
      };
      const result = await work(watched);
      if (wroteWake) {
        faulty.killed++;
        throw new Error('the process died before COMMIT');
      }
      return result;
    });
  return faulty;
}

describeEachStore(
  'a tick killed before its commit',
  (ctx) => {
    ownTicks(ctx);

    test('leaves no wake, no record and no moved trigger; the next tick takes each occurrence once', async () => {
      const { id } = await objective(ctx);
      await approvedPolicy(ctx, id);
      const trigger = await call(ctx, 'post', `/v1/objectives/${id}/schedules`, 'createObjectiveSchedule', 201, {
        cron: '*/2 * * * * *',
        missed_run_policy: 'catch_up',
        max_catch_up: 100,
      });
      await backdate(ctx, id, 10);
      const db = ctx().hub.kernel.db;
      const before = await db.query<{ next_due_at: Date }>('SELECT next_due_at FROM objective_triggers WHERE id = $1', [trigger.id]);

      const faulty = killedBeforeCommit(db);
      const dying = createAutonomyApi({ db: faulty, config: ctx().hub.kernel.config, tools: ctx().hub.kernel.tools });
      await assert.rejects(dying.scheduler.tick(), /died before COMMIT/);
      assert.ok(faulty.killed >= 1);

      assert.deepEqual(await wakes(ctx, id), []);
      const { rows: responses } = await db.query("SELECT id FROM responses WHERE metadata ->> 'palai_objective' = $1", [id]);
      assert.deepEqual(responses, []);
      const { rows: keys } = await db.query("SELECT key FROM idempotency_keys WHERE source = 'schedule' AND key LIKE $1", [`${trigger.id}@%`]);
      assert.deepEqual(keys, []);
      const after = await db.query<{ next_due_at: Date }>('SELECT next_due_at FROM objective_triggers WHERE id = $1', [trigger.id]);
      assert.equal(after.rows[0].next_due_at.getTime(), before.rows[0].next_due_at.getTime());

      const outcome = await createAutonomyApi(ctx().hub.kernel).scheduler.tick();
      assert.ok(outcome.admitted >= 5, JSON.stringify(outcome));
      const taken = await wakes(ctx, id);
      assert.equal(taken.filter((w) => w.outcome === 'admitted').length, outcome.admitted);
      const { rows: admitted } = await db.query<{ n: string }>("SELECT count(*) AS n FROM responses WHERE metadata ->> 'palai_objective' = $1", [id]);
      assert.equal(Number(admitted[0].n), outcome.admitted);
      assert.ok(taken.every((w) => w.due_at * 1000 >= before.rows[0].next_due_at.getTime() - 1000));
    });
  },
  { minScheduleSeconds: 1, schedulerIntervalMs: 60_000, scheduleGraceSeconds: 0 },
);
