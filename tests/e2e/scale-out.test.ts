// Scale-out: two `palai serve` processes (both role all) on one PostgreSQL
// database share the work. 200 background responses, created alternately
// through both, all complete; each ran once (one response.in_progress, one
// terminal event, a gap-free journal) and both processes did part of the work.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cleanUpProcesses } from '../support/cli.js';
import { freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';
import {
  API_KEY,
  api,
  assertJournal,
  baseOf,
  clusterEnv,
  createAgent,
  createBackground,
  getResponse,
  logsOf,
  metricValue,
  readJournal,
  startHub,
  waitUntil,
  type HubProcess,
} from './cluster.js';

const RESPONSES = 200;
/** Requests in flight at once while creating and while checking. */
const PARALLEL = 16;

const postgresReason = await postgresUnavailable();

after(cleanUpProcesses);

/** Runs `work` over `items` with at most `limit` at once, keeping the order of results. */
async function pooled<T, R>(items: T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: limit }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index], index);
    }
  });
  await Promise.all(lanes);
  return results;
}

describe('scale-out: two processes on one database [postgres]', { skip: postgresReason ?? false }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | null = null;
  const nodes: HubProcess[] = [];

  before(async () => {
    database = await freshPostgresDatabase();
  });
  after(async () => {
    cleanUpProcesses();
    await database?.drop();
  });

  test(`${RESPONSES} background responses through two serve processes each run exactly once`, { timeout: 120_000 }, async (t) => {
    try {
      // Both start at once on the empty database: migrations and the bootstrap are serialized by advisory locks.
      const env = clusterEnv(database!.url, { PALAI_BOOTSTRAP_API_KEY: API_KEY });
      nodes.push(...(await Promise.all([startHub('A', 'all', env), startHub('B', 'all', env)])));
      const [a, b] = nodes;
      const bootstrapped = nodes.filter((n) => /Created project/.test(n.proc.stdout()));
      assert.equal(bootstrapped.length, 1, 'exactly one process bootstrapped the empty store');

      await createAgent(baseOf(a), { name: 'echo', model: { provider: 'fake' } });
      const inputs = Array.from({ length: RESPONSES }, (_, i) => `scale-out input #${i}`);
      const started = performance.now();
      const created = await pooled(inputs, PARALLEL, (input, i) => createBackground(baseOf(i % 2 === 0 ? a : b), 'echo', input));
      const admittedMs = performance.now() - started;
      assert.equal(new Set(created.map((r) => r.id)).size, RESPONSES);

      // One request tells how many responses (all projects) are completed.
      await waitUntil(
        `all ${RESPONSES} responses completing`,
        90_000,
        async () => {
          const metrics = await api(baseOf(a), 'GET', '/metrics');
          return metricValue(metrics.body, 'palai_responses{status="completed"}') === RESPONSES;
        },
        100,
      );
      const wallMs = performance.now() - started;
      t.diagnostic(`${RESPONSES} responses admitted in ${Math.round(admittedMs)} ms and all completed ${Math.round(wallMs)} ms after the first request`);

      await pooled(created, PARALLEL, async (response, i) => {
        // Read back through the other process than the one that admitted it.
        const base = baseOf(i % 2 === 0 ? b : a);
        const final = await getResponse(base, response.id);
        assert.equal(final.status, 'completed');
        assert.equal(final.output_text, inputs[i]);
        const journal = await readJournal(base, response.id);
        assertJournal(journal, 'response.completed');
        assert.deepEqual(
          journal.filter((e) => e.event === 'response.created' || e.event === 'response.in_progress').map((e) => e.event),
          ['response.created', 'response.in_progress'],
          `${response.id} was admitted once and run once`,
        );
        const messages = final.output.filter((item: { type: string }) => item.type === 'message');
        assert.equal(messages.length, 1, `${response.id} has one answer`);
        assert.equal(journal.at(-1)!.data.response.output_text, inputs[i]);
      });

      // Each process counts the responses it finished: together exactly one finish per response, and both worked.
      const finished = await Promise.all(
        nodes.map(async (n) => metricValue((await api(baseOf(n), 'GET', '/metrics')).body, 'palai_responses_finished_total{status="completed"}')),
      );
      const takeovers = await Promise.all(nodes.map(async (n) => metricValue((await api(baseOf(n), 'GET', '/metrics')).body, 'palai_lease_takeovers_total')));
      t.diagnostic(`finished by A: ${finished[0]}, by B: ${finished[1]}; lease takeovers: ${takeovers.join(', ')}`);
      assert.equal(finished[0] + finished[1], RESPONSES, 'each response finished exactly once');
      assert.ok(finished[0] > 0 && finished[1] > 0, `both processes ran responses (${finished.join(' / ')})`);
    } catch (error) {
      if (error instanceof Error) error.message += `\n${logsOf(...nodes)}`;
      throw error;
    }
  });
});
