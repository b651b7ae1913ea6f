// Objectives across real `palai serve` processes on one PostgreSQL database:
// two processes running a two-second schedule for 20 s (one SIGKILLed half-way)
// take every occurrence exactly once, each admitted one with exactly one
// response; all processes stopped for ~11 s, the one started again takes the
// missed occurrences by each trigger's missed-run policy.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { PgDb } from '../../core/store/pg-db.js';
import { cleanUpProcesses } from '../support/cli.js';
import { postgresUnavailable } from '../support/stores.js';
import { API_KEY, api, baseOf, createAgent, kill9, logsOf, metricValue, stopHub, useCluster, waitUntil, type HubProcess } from './cluster.js';

const postgresReason = await postgresUnavailable();
after(cleanUpProcesses);

const POLICY = { objective_scope: 'the build of example/app', consequence_classes: ['observe'] };
/** How late an occurrence may be and still be on time, in these processes. */
const GRACE_SECONDS = 1;

interface WakeRow {
  trigger_id: string;
  due_at: Date;
  outcome: string;
  reason: string | null;
  response_id: string | null;
  created_at: Date;
}

async function ok(base: string, method: 'GET' | 'POST', path: string, body: unknown, status: number): Promise<any> {
  const res = await api(base, method, path, body);
  assert.equal(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** An objective of a fake agent with an approved policy and one two-second schedule. */
async function scheduled(base: string, schedule: Record<string, unknown> = {}): Promise<{ id: string; trigger: string }> {
  const agent = await createAgent(base, { name: `watch-${Math.random().toString(36).slice(2, 8)}`, model: { provider: 'fake' } });
  const objective = await ok(base, 'POST', '/v1/objectives', { agent: agent.id, description: 'Watch the build.' }, 201);
  const draft = await ok(base, 'POST', `/v1/objectives/${objective.id}/policies`, { document: POLICY }, 201);
  await ok(base, 'POST', `/v1/objectives/${objective.id}/policies/${draft.version}/approve`, { hash: draft.hash }, 200);
  const trigger = await ok(base, 'POST', `/v1/objectives/${objective.id}/schedules`, { cron: '*/2 * * * * *', ...schedule }, 201);
  return { id: objective.id, trigger: trigger.id };
}

/** PATCH an objective's status (the cluster helper speaks GET and POST only). */
async function setStatus(base: string, id: string, status: 'paused' | 'active'): Promise<void> {
  const res = await fetch(`${base}/v1/objectives/${id}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ status }),
  });
  assert.equal(res.status, 200, await res.text());
}

describe('objectives across processes [postgres]', { skip: postgresReason ?? false, timeout: 240_000 }, () => {
  const cluster = useCluster({ PALAI_MIN_SCHEDULE_SECONDS: '1', PALAI_SCHEDULER_INTERVAL_MS: '200', PALAI_SCHEDULE_GRACE_SECONDS: String(GRACE_SECONDS) });
  let db: PgDb | null = null;
  const store = () => (db ??= new PgDb(String(cluster.env().PALAI_DATABASE_URL), 2));
  after(async () => db?.close());

  const wakesOf = async (objectiveId: string): Promise<WakeRow[]> =>
    (await store().query<WakeRow>('SELECT * FROM objective_wakes WHERE objective_id = $1 ORDER BY due_at', [objectiveId])).rows;

  test('two processes, one SIGKILLed half-way: every occurrence once, each admitted one with exactly one response', async () => {
    // The default grace: a tick a second late on a loaded machine is still on time.
    const onTime = { PALAI_SCHEDULE_GRACE_SECONDS: '10' };
    const a = await cluster.start('a', 'all', onTime);
    const b = await cluster.start('b', 'all', onTime);
    const base = baseOf(a);
    const { id, trigger } = await scheduled(base);
    const started = Date.now();
    await sleep(10_000);
    await kill9(b);
    await sleep(Math.max(0, 20_000 - (Date.now() - started)));
    // PATCH through fetch: the cluster helper speaks GET and POST only.
    await setStatus(base, id, 'paused');
    // Every wake admitted ends (B's, if it held one, is taken over by A when its lease runs out).
    await waitUntil('every wake ended', 60_000, async () => {
      const { rows } = await store().query<{ open: string }>(
        "SELECT count(*) AS open FROM responses WHERE metadata ->> 'palai_objective' = $1 AND status NOT IN ('completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded')",
        [id],
      );
      return Number(rows[0].open) === 0;
    });

    const wakes = await wakesOf(id);
    const { rows: responses } = await store().query<{ id: string; trigger: string; due: string }>(
      "SELECT id, metadata ->> 'palai_trigger' AS trigger, metadata ->> 'palai_due_at' AS due FROM responses WHERE metadata ->> 'palai_objective' = $1",
      [id],
    );
    const admitted = wakes.filter((w) => w.outcome === 'admitted');
    assert.ok(wakes.length >= 8, `${wakes.length} occurrences in 20 s\n${logsOf(a, b)}`);
    // No occurrence lost: consecutive due times two seconds apart, from the first to the last.
    wakes.slice(1).forEach((w, i) => assert.equal(w.due_at.getTime() - wakes[i].due_at.getTime(), 2000, JSON.stringify(wakes)));
    assert.ok(wakes.every((w) => w.trigger_id === trigger));
    // The wakes list and the responses match one to one.
    assert.equal(responses.length, admitted.length, JSON.stringify({ responses, admitted }));
    const byId = new Map(responses.map((r) => [r.id, r]));
    for (const w of admitted) {
      const response = byId.get(w.response_id ?? '');
      assert.ok(response, `wake ${w.due_at.toISOString()} has response ${w.response_id}`);
      assert.equal(response.trigger, trigger);
      assert.equal(new Date(response.due).getTime(), w.due_at.getTime());
    }
    // A wake still running two seconds later (under load, or taken over after the kill) is the only reason to skip one.
    assert.ok(
      wakes.every((w) => w.outcome === 'admitted' || w.reason === 'overlap'),
      JSON.stringify(wakes.filter((w) => w.outcome !== 'admitted')),
    );
    assert.ok(admitted.length >= wakes.length / 2, `${admitted.length} of ${wakes.length} admitted`);
    // /metrics counts what this process took: a share of the admitted wakes.
    const metrics = await api(base, 'GET', '/metrics');
    const counted = metricValue(String(metrics.body), 'palai_objective_wakes_total{outcome="admitted",reason=""}');
    assert.ok(counted >= 1 && counted <= admitted.length, `${counted} of ${admitted.length}`);
  });

  test('all processes stopped ~11 s: skip admits no missed occurrence, run_once one, catch_up three and records the rest', async () => {
    const first = await cluster.start('first', 'all');
    const base = baseOf(first);
    const objectives = {
      skip: await scheduled(base, { missed_run_policy: 'skip' }),
      run_once: await scheduled(base, { missed_run_policy: 'run_once' }),
      catch_up: await scheduled(base, { missed_run_policy: 'catch_up', max_catch_up: 3 }),
    };
    await waitUntil('each objective woke once', 20_000, async () => {
      for (const { id } of Object.values(objectives)) if (!(await wakesOf(id)).some((w) => w.outcome === 'admitted')) return false;
      return true;
    });
    // Paused before the stop, which cancels their open wakes: a wake admitted just before the SIGTERM would
    // still be queued at the restart, and the one wake run_once owes would rightly be skipped as an overlap.
    for (const { id } of Object.values(objectives)) await setStatus(base, id, 'paused');
    await stopHub(first);
    const stoppedAt = new Date();
    await sleep(11_000);
    const again: HubProcess = await cluster.start('again', 'all');
    for (const { id } of Object.values(objectives)) await setStatus(baseOf(again), id, 'active');
    await waitUntil('every objective taken again', 30_000, async () => {
      for (const { id } of Object.values(objectives)) if (!(await wakesOf(id)).some((w) => w.created_at > stoppedAt)) return false;
      return true;
    });

    for (const [policy, { id }] of Object.entries(objectives)) {
      const wakes = await wakesOf(id);
      const after = wakes.filter((w) => w.created_at > stoppedAt);
      // The first tick after the restart saw these as due; its store time is their created_at.
      const firstTick = Math.min(...after.map((w) => w.created_at.getTime()));
      const missed = after.filter((w) => w.created_at.getTime() === firstTick && firstTick - w.due_at.getTime() > GRACE_SECONDS * 1000);
      const admitted = missed.filter((w) => w.outcome === 'admitted');
      const context = `${policy}: ${JSON.stringify(missed)}\n${logsOf(again)}`;
      assert.ok(missed.length >= 4, context);
      if (policy === 'skip') {
        assert.equal(admitted.length, 0, context);
        assert.ok(
          missed.every((w) => w.reason === 'missed'),
          context,
        );
      } else if (policy === 'run_once') {
        // The newest missed one, unless one on time fired for all of them.
        const onTime = after.filter((w) => w.created_at.getTime() === firstTick && !missed.includes(w) && w.outcome === 'admitted');
        assert.equal(admitted.length + onTime.length, 1, context);
        assert.ok(
          missed.filter((w) => w.outcome === 'skipped').every((w) => w.reason === 'missed'),
          context,
        );
      } else {
        assert.equal(admitted.length, 3, context);
        assert.ok(
          missed.filter((w) => w.outcome === 'skipped').every((w) => w.reason === 'catch-up-cap'),
          context,
        );
        // The oldest are caught up.
        const latestCaught = Math.max(...admitted.map((w) => w.due_at.getTime()));
        assert.ok(
          missed.filter((w) => w.outcome === 'skipped').every((w) => w.due_at.getTime() > latestCaught),
          context,
        );
      }
      // Nothing was taken twice: the records before the stop and after it do not meet.
      assert.equal(new Set(wakes.map((w) => w.due_at.getTime())).size, wakes.length);
    }
  });
});
