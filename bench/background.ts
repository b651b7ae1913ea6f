// Background throughput by worker count, through the compiled CLI: one
// `palai serve --role api` and 1, then 2, `palai serve --role worker` processes
// (PALAI_WORKER_CONCURRENCY at its default) on a scratch PostgreSQL database.
// Each phase submits PALAI_BENCH_BACKGROUND_REQUESTS (default 400) `background:
// true` responses on the fake model ("one two three") from 4 concurrent
// keep-alive clients, as fast as the API admits them, and polls the responses
// table until none of them is queued or in progress. Figures: responses/s from
// the first POST to the last completed_at; the admission rate, and how many
// were not done when the last POST was answered (the workers' backlog: near 0
// means admission, not the workers, set the pace); p50/p99 of completed_at −
// created_at (the database's own times). A phase starts with its workers warm
// (a few responses run first). Then the workers alone: as many responses
// queued with no worker running, the workers started, and the rate from the
// first claim to the last completion. A response that did not end `completed` is
// printed as a finding, not thrown. Prints; asserts nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { record } from './figures.js';
import { build, call, percentile, scratchDatabase, serve, serveMany, stop, type Served } from './processes.js';

const REQUESTS = Number(process.env.PALAI_BENCH_BACKGROUND_REQUESTS ?? 400);
const CLIENTS = 4;
const WARMUP = 20;
const WORKER_COUNTS = [1, 2];
/** A phase gives up when nothing completed for this long. */
const STALL_MS = 60_000;
const AGENT = 'bench-echo';

const n = (value: number, digits = 1) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** `count` background responses from CLIENTS clients; their ids and when the first POST was sent (epoch ms). */
async function submit(base: string, count: number): Promise<{ ids: string[]; firstPostAt: number; admitMs: number }> {
  const ids: string[] = [];
  let sent = 0;
  const firstPostAt = Date.now();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (sent < count) {
        sent++;
        const response = await call<{ id: string; status: string }>(base, 'POST', '/v1/responses', { model: AGENT, input: 'one two three', background: true });
        ids.push(response.id);
      }
    }),
  );
  return { ids, firstPostAt, admitMs: performance.now() - started };
}

interface Settled {
  statuses: Record<string, number>;
  lastCompletedAt: number;
  latencies: number[];
}

/** Polls until none of `ids` is queued or in progress (or nothing moved for STALL_MS); then their statuses and times. */
async function settle(db: pg.Client, ids: string[]): Promise<Settled> {
  let lastDone = -1;
  let movedAt = performance.now();
  for (;;) {
    const { rows } = await db.query<{ pending: string; done: string }>(
      `SELECT count(*) FILTER (WHERE status IN ('queued', 'in_progress')) AS pending, count(*) FILTER (WHERE status NOT IN ('queued', 'in_progress')) AS done FROM responses WHERE id = ANY($1)`,
      [ids],
    );
    const done = Number(rows[0].done);
    if (Number(rows[0].pending) === 0) break;
    if (done !== lastDone) [lastDone, movedAt] = [done, performance.now()];
    else if (performance.now() - movedAt > STALL_MS) {
      console.log(`!! FINDING: ${rows[0].pending} of ${ids.length} background responses still pending after ${STALL_MS / 1000} s without progress`);
      break;
    }
    await sleep(100);
  }
  const statuses = await db.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM responses WHERE id = ANY($1) GROUP BY status', [ids]);
  const times = await db.query<{ ms: number; done: number }>(
    `SELECT extract(epoch FROM completed_at - created_at) * 1000 AS ms, extract(epoch FROM completed_at) * 1000 AS done FROM responses WHERE id = ANY($1) AND completed_at IS NOT NULL`,
    [ids],
  );
  return {
    statuses: Object.fromEntries(statuses.rows.map((r) => [r.status, Number(r.n)])),
    lastCompletedAt: Math.max(...times.rows.map((r) => Number(r.done))),
    latencies: times.rows.map((r) => Number(r.ms)).sort((a, b) => a - b),
  };
}

async function phase(api: Served, db: pg.Client, databaseUrl: string, workers: number): Promise<void> {
  const running: Served[] = [];
  try {
    running.push(...(await serveMany(workers, 'worker', { PALAI_DATABASE_URL: databaseUrl })));
    await settle(db, (await submit(api.base, WARMUP)).ids);
    const { ids, firstPostAt, admitMs } = await submit(api.base, REQUESTS);
    const backlog = await db.query<{ n: string }>(`SELECT count(*) AS n FROM responses WHERE id = ANY($1) AND status IN ('queued', 'in_progress')`, [ids]);
    const settled = await settle(db, ids);
    const seconds = (settled.lastCompletedAt - firstPostAt) / 1000;
    const completed = settled.statuses.completed ?? 0;
    const throughput = completed / seconds;
    const p50 = percentile(settled.latencies, 50);
    const p99 = percentile(settled.latencies, 99);
    console.log(
      `${workers} worker${workers > 1 ? 's' : ''}: ${completed} of ${REQUESTS} completed in ${n(seconds, 2)} s = ${n(throughput)} responses/s ` +
        `(admitted in ${n(admitMs / 1000, 2)} s = ${n(REQUESTS / (admitMs / 1000))}/s, ${backlog.rows[0].n} not yet done then); completed_at − created_at p50 ${n(p50, 0)} ms, p99 ${n(p99, 0)} ms`,
    );
    if (completed !== REQUESTS)
      console.log(`!! FINDING: ${REQUESTS - completed} of ${REQUESTS} background responses did not complete: ${JSON.stringify(settled.statuses)}`);
    const quiet = { print: false };
    const label = `${workers} worker process${workers > 1 ? 'es' : ''}`;
    record(
      {
        name: `background responses/s, ${label} (first POST → last completion)`,
        value: throughput,
        unit: 'responses/s',
        note: `${completed}/${REQUESTS} completed; admitted at ${n(REQUESTS / (admitMs / 1000))}/s, ${backlog.rows[0].n} not done at the last admission`,
      },
      quiet,
    );
    record(
      { name: `background completed_at − created_at p50, ${label}`, value: p50, unit: 'ms', note: `p99 ${n(p99, 0)} ms, ${REQUESTS} submitted at once` },
      quiet,
    );
  } finally {
    for (const worker of running) await stop(worker);
  }
  await drain(api, db, databaseUrl, workers);
}

/**
 * The workers alone: REQUESTS responses admitted with no worker running, then
 * the workers started; the rate from the first claim (the first `in_progress`
 * journal row) to the last completed_at. The workers start cold.
 */
async function drain(api: Served, db: pg.Client, databaseUrl: string, workers: number): Promise<void> {
  const { ids } = await submit(api.base, REQUESTS);
  const running: Served[] = [];
  try {
    running.push(...(await serveMany(workers, 'worker', { PALAI_DATABASE_URL: databaseUrl })));
    const settled = await settle(db, ids);
    const { rows } = await db.query<{ at: number }>(
      `SELECT extract(epoch FROM min(created_at)) * 1000 AS at FROM response_events WHERE response_id = ANY($1) AND type = 'status' AND data->>'status' = 'in_progress'`,
      [ids],
    );
    const completed = settled.statuses.completed ?? 0;
    const throughput = completed / ((settled.lastCompletedAt - Number(rows[0].at)) / 1000);
    console.log(
      `${workers} worker${workers > 1 ? 's' : ''}, ${REQUESTS} queued before they started: ${completed} completed at ${n(throughput)} responses/s (first claim → last completion)`,
    );
    if (completed !== REQUESTS)
      console.log(`!! FINDING: ${REQUESTS - completed} of ${REQUESTS} queued background responses did not complete: ${JSON.stringify(settled.statuses)}`);
    record(
      {
        name: `background drain of a queue of ${REQUESTS}, ${workers} worker process${workers > 1 ? 'es' : ''}`,
        value: throughput,
        unit: 'responses/s',
        note: `${completed}/${REQUESTS} completed; cold workers`,
      },
      { print: false },
    );
  } finally {
    for (const worker of running) await stop(worker);
  }
}

export async function benchBackground(): Promise<void> {
  console.log(`\n## Background throughput by worker processes (compiled CLI, PostgreSQL, ${REQUESTS} responses from ${CLIENTS} clients)`);
  build();
  const database = await scratchDatabase('background');
  if (!database) return;
  const db = new pg.Client({ connectionString: database.url });
  let api: Served | null = null;
  try {
    await db.connect();
    api = await serve('api', { PALAI_DATABASE_URL: database.url });
    await call(api.base, 'POST', '/v1/agents', { name: AGENT, model: { provider: 'fake' } });
    for (const workers of WORKER_COUNTS) await phase(api, db, database.url, workers);
  } finally {
    if (api) await stop(api);
    await db.end().catch(() => undefined);
    await database.drop();
  }
}
