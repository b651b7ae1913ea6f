// 1,000 concurrent SSE subscribers on running responses, through the compiled
// CLI: one `palai serve --role api` (the process measured) and one `--role
// worker` (PALAI_WORKER_CONCURRENCY 64) on a scratch PostgreSQL database. The
// agent is the fake model scripted to stream PALAI_BENCH_SSE_WORDS words (120)
// with PALAI_BENCH_SSE_DELAY_MS (500) between them: each response runs about
// 60 s (room for 1,000 streams to open on a busy 2-core machine) and journals
// one text delta per word. PALAI_BENCH_SSE_RESPONSES (50) background responses
// are created, then PALAI_BENCH_SSE_SUBSCRIBERS (1,000) subscribers, 20 a
// response, open `GET /v1/responses/{id}?stream=true` (OpenAI's
// retrieve-with-stream: the journal replayed, then followed live) — ~100
// events/s fanned out to ~2,000 deliveries/s. One connection each, no
// keep-alive, from a worker thread that only splits frames and timestamps them.
// Figures: the api process's RSS idle (after one warm-up stream) and with every
// stream open (/proc/<pid>/status VmRSS), ÷ streams; the delivery lag of every
// live event (journaled after its subscriber opened), p50/p99 over all
// deliveries, from the journal row's created_at (PostgreSQL's now(), the
// appending statement's start; same clock) and from the event's first arrival
// at any subscriber of its response (the fan-out spread); the CPU the api
// process and this process (the subscribers) used while the streams ran
// (/proc/<pid>/stat, process.cpuUsage) and the database's commits meanwhile
// (pg_stat_database: each follower reads the journal itself); whether every
// subscriber opened while its response ran, and got every sequence and exactly
// one terminal event — a mismatch is printed as a finding. Prints; asserts
// nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { record } from './figures.js';
import { build, call, cpuSeconds, KEY, percentile, rssMb, scratchDatabase, serve, stop, type Served } from './processes.js';

const SUBSCRIBERS = Number(process.env.PALAI_BENCH_SSE_SUBSCRIBERS ?? 1000);
const RESPONSES = Number(process.env.PALAI_BENCH_SSE_RESPONSES ?? 50);
const WORDS = Number(process.env.PALAI_BENCH_SSE_WORDS ?? 120);
const DELAY_MS = Number(process.env.PALAI_BENCH_SSE_DELAY_MS ?? 500);
const AGENT = 'bench-slow';

const n = (value: number, digits = 1) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

interface Subscriber {
  response: string;
  /** Epoch ms: the stream's headers arrived. */
  openedAt: number;
  /** [sequence, epoch ms of arrival] of each frame with an SSE id. */
  frames: Array<[number, number]>;
  terminals: number;
  errors: string[];
}

/**
 * The subscribers: one plain http.get each (agent: false, so one connection
 * each), all started at once. Posts 'open' when every one has its headers
 * (or failed), then every subscriber's frames when all have ended.
 */
const SUBSCRIBE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { base, key, plan, timeoutMs } = workerData;
const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete', 'response.cancelled']);
const now = () => performance.timeOrigin + performance.now();
let opened = 0;
const opening = () => { if (++opened === plan.length) parentPort.postMessage({ type: 'open' }); };
const subscribe = (response) => new Promise((resolve) => {
  const sub = { response, openedAt: 0, frames: [], terminals: 0, errors: [] };
  let counted = false;
  const open = () => { if (!counted) { counted = true; opening(); } };
  const req = http.get(base + '/v1/responses/' + response + '?stream=true', { agent: false, headers: { authorization: 'Bearer ' + key } }, (res) => {
    sub.openedAt = now();
    open();
    if (res.statusCode !== 200) sub.errors.push('HTTP ' + res.statusCode);
    res.setEncoding('utf8');
    let buffer = '';
    res.on('data', (chunk) => {
      const at = now();
      buffer += chunk;
      let end;
      while ((end = buffer.indexOf('\\n\\n')) !== -1) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (\\d+)$/m.exec(frame);
        const event = /^event: (.+)$/m.exec(frame);
        if (id) sub.frames.push([Number(id[1]), at]);
        if (event && TERMINAL.has(event[1])) sub.terminals++;
        if (event && event[1] === 'error') sub.errors.push(frame.slice(0, 200));
      }
    });
    res.on('end', () => resolve(sub));
    res.on('error', (error) => { sub.errors.push(String(error)); resolve(sub); });
  });
  req.setTimeout(timeoutMs, () => { sub.errors.push('timed out'); req.destroy(); });
  req.on('error', (error) => { open(); sub.errors.push(String(error)); resolve(sub); });
});
Promise.all(plan.map(subscribe)).then((subscribers) => parentPort.postMessage({ type: 'done', subscribers }));
`;

function subscribe(base: string, plan: string[], timeoutMs: number, onOpen: () => void): Promise<Subscriber[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(SUBSCRIBE, { eval: true, workerData: { base, key: KEY, plan, timeoutMs } });
    worker.on('message', (message: { type: 'open' } | { type: 'done'; subscribers: Subscriber[] }) => {
      if (message.type === 'open') onOpen();
      else void worker.terminate().then(() => resolve(message.subscribers));
    });
    worker.once('error', reject);
  });
}

/**
 * Transactions committed in the current database so far (pg_stat_database). A
 * backend reports its counts when idle, at most once a second, so this reads
 * after a pause; the processes' idle polls (a few a second) are counted too.
 */
async function committed(db: pg.Client): Promise<number> {
  await sleep(1500);
  await db.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await db.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()');
  return Number(rows[0].n);
}

async function streams(api: Served, db: pg.Client, ids: string[], transactionsBefore: number): Promise<void> {
  const pid = api.child.pid!;
  const plan = Array.from({ length: SUBSCRIBERS }, (_, i) => ids[i % ids.length]);
  const idle = rssMb(pid);
  let open = NaN;
  let peak = idle;
  let done = false;
  const openedAt = performance.now();
  let openMs = NaN;
  const apiCpu = cpuSeconds(pid);
  const clientCpu = process.cpuUsage();
  const sampling = (async () => {
    while (!done) {
      peak = Math.max(peak, rssMb(pid));
      await sleep(250);
    }
  })();
  const subscribers = await subscribe(api.base, plan, WORDS * DELAY_MS + 120_000, () => {
    openMs = performance.now() - openedAt;
    open = rssMb(pid);
  });
  done = true;
  const wallSeconds = (performance.now() - openedAt) / 1000;
  const apiCpuSeconds = cpuSeconds(pid) - apiCpu;
  const used = process.cpuUsage(clientCpu);
  const clientCpuSeconds = (used.user + used.system) / 1e6;
  await sampling;
  const transactions = (await committed(db)) - transactionsBefore;

  const { rows } = await db.query<{ response_id: string; sequence: number; at: number; terminal: boolean }>(
    `SELECT response_id, sequence, extract(epoch FROM created_at) * 1000 AS at, type = 'status' AND data->>'status' IN ('completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded') AS terminal
       FROM response_events WHERE response_id = ANY($1)`,
    [ids],
  );
  const journaled = new Map<string, number>(rows.map((r) => [`${r.response_id}:${r.sequence}`, Number(r.at)]));
  const last = new Map<string, number>();
  const endedAt = new Map<string, number>();
  for (const r of rows) last.set(r.response_id, Math.max(last.get(r.response_id) ?? -1, r.sequence));
  for (const r of rows) if (r.terminal) endedAt.set(r.response_id, Number(r.at));
  const whileRunning = subscribers.filter((s) => s.openedAt > 0 && s.openedAt < (endedAt.get(s.response) ?? Infinity)).length;
  const first = Math.min(...rows.map((r) => Number(r.at)));
  const runSeconds = (Math.max(...endedAt.values()) - first) / 1000;
  const firstArrival = new Map<string, number>();
  for (const s of subscribers)
    for (const [seq, at] of s.frames) firstArrival.set(`${s.response}:${seq}`, Math.min(firstArrival.get(`${s.response}:${seq}`) ?? Infinity, at));

  const fromJournal: number[] = [];
  const fromFirst: number[] = [];
  let incomplete = 0;
  const problems: string[] = [];
  for (const s of subscribers) {
    const expected = (last.get(s.response) ?? -1) + 1;
    const gapFree = s.frames.length === expected && s.frames.every(([seq], i) => seq === i);
    if (!gapFree || s.terminals !== 1 || s.errors.length > 0) {
      incomplete++;
      if (problems.length < 5)
        problems.push(`${s.response}: ${s.frames.length}/${expected} events, ${s.terminals} terminal, errors ${JSON.stringify(s.errors.slice(0, 2))}`);
    }
    for (const [seq, at] of s.frames) {
      const created = journaled.get(`${s.response}:${seq}`);
      if (created === undefined || created < s.openedAt) continue; // a replayed event, not a live delivery
      fromJournal.push(at - created);
      fromFirst.push(at - firstArrival.get(`${s.response}:${seq}`)!);
    }
  }
  fromJournal.sort((a, b) => a - b);
  fromFirst.sort((a, b) => a - b);
  const perStreamKb = ((open - idle) * 1024) / SUBSCRIBERS;
  const peakKb = ((peak - idle) * 1024) / SUBSCRIBERS;
  const events = rows.length;

  console.log(
    `${SUBSCRIBERS} subscribers on ${ids.length} responses (${events} journal events in ${n(runSeconds)} s, ${n(events / runSeconds)} events/s; ${WORDS} words, ${DELAY_MS} ms apart): ` +
      `all open in ${n(openMs / 1000, 2)} s, ${whileRunning} of them while their response ran`,
  );
  if (whileRunning < SUBSCRIBERS)
    console.log(`!! FINDING: ${SUBSCRIBERS - whileRunning} subscribers opened after their response had ended (a replay, not a live stream)`);
  console.log(`api RSS idle ${n(idle)} MB, all streams open ${n(open)} MB, peak ${n(peak)} MB → ${n(perStreamKb)} KB a stream (${n(peakKb)} KB at the peak)`);
  console.log(
    `delivery lag over ${fromJournal.length} live deliveries: from the journal row p50 ${n(percentile(fromJournal, 50))} ms, p99 ${n(percentile(fromJournal, 99))} ms; ` +
      `from the first subscriber's arrival p50 ${n(percentile(fromFirst, 50))} ms, p99 ${n(percentile(fromFirst, 99))} ms`,
  );
  const deliveries = subscribers.reduce((sum, sub) => sum + sub.frames.length, 0);
  console.log(
    `CPU over the ${n(wallSeconds)} s the streams ran: api ${n(apiCpuSeconds, 2)} s (${n((100 * apiCpuSeconds) / wallSeconds, 0)}% of a core, ${n((1e6 * apiCpuSeconds) / deliveries, 0)} µs a delivery of ${deliveries}), ` +
      `subscribers ${n(clientCpuSeconds, 2)} s (${n((100 * clientCpuSeconds) / wallSeconds, 0)}%)`,
  );
  console.log(
    `database transactions from the responses' admission to their end (all processes, this bench's reads included): ${transactions}, ${n(transactions / events)} a journal event`,
  );
  if (incomplete > 0) console.log(`!! FINDING: ${incomplete} of ${SUBSCRIBERS} subscribers did not get the complete stream, e.g. ${problems.join('; ')}`);
  else console.log(`every subscriber got every event and one terminal event`);
  const quiet = { print: false };
  record(
    {
      name: `SSE api RSS per open stream, ${SUBSCRIBERS} subscribers`,
      value: perStreamKb,
      unit: 'KB',
      note: `idle ${n(idle)} MB, open ${n(open)} MB, peak ${n(peak)} MB`,
    },
    quiet,
  );
  record(
    {
      name: `SSE delivery lag from the journal row p50, ${SUBSCRIBERS} subscribers`,
      value: percentile(fromJournal, 50),
      unit: 'ms',
      note: `p99 ${n(percentile(fromJournal, 99))} ms`,
    },
    quiet,
  );
  record(
    {
      name: `SSE fan-out spread from the first subscriber p99, ${SUBSCRIBERS} subscribers`,
      value: percentile(fromFirst, 99),
      unit: 'ms',
      note: `p50 ${n(percentile(fromFirst, 50))} ms`,
    },
    quiet,
  );
  record(
    {
      name: `SSE api CPU per delivered event, ${SUBSCRIBERS} subscribers`,
      value: (1e6 * apiCpuSeconds) / deliveries,
      unit: 'µs',
      note: `${n((100 * apiCpuSeconds) / wallSeconds, 0)}% of a core over ${n(wallSeconds)} s`,
    },
    quiet,
  );
  record(
    {
      name: `SSE database transactions per journal event, ${SUBSCRIBERS} subscribers`,
      value: transactions / events,
      unit: 'transactions',
      note: `${transactions} over ${n(wallSeconds)} s, all processes`,
    },
    quiet,
  );
  record({ name: `SSE subscribers without the complete stream, of ${SUBSCRIBERS}`, value: incomplete, unit: 'subscribers' }, quiet);
}

export async function benchSseFanout(): Promise<void> {
  console.log(`\n## SSE fan-out: ${SUBSCRIBERS} subscribers on ${RESPONSES} running responses (compiled CLI, PostgreSQL)`);
  build();
  const database = await scratchDatabase('sse');
  if (!database) return;
  const db = new pg.Client({ connectionString: database.url });
  const processes: Served[] = [];
  try {
    await db.connect();
    const env = { PALAI_DATABASE_URL: database.url };
    const api = await serve('api', env);
    processes.push(api, await serve('worker', { ...env, PALAI_WORKER_CONCURRENCY: String(Math.max(64, RESPONSES)) }));
    const text = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');
    await call(api.base, 'POST', '/v1/agents', { name: AGENT, model: { provider: 'fake', script: [{ text, delay_ms: DELAY_MS }] } });
    // Warm-up: one response followed to its end by one subscriber, then the idle figure.
    const warm = await call<{ id: string }>(api.base, 'POST', '/v1/responses', { model: AGENT, input: 'go', background: true });
    await subscribe(api.base, [warm.id], WORDS * DELAY_MS + 60_000, () => undefined);
    await sleep(2000);
    const transactionsBefore = await committed(db);
    const ids: string[] = [];
    for (let i = 0; i < RESPONSES; i++)
      ids.push((await call<{ id: string }>(api.base, 'POST', '/v1/responses', { model: AGENT, input: 'go', background: true })).id);
    await streams(api, db, ids, transactionsBefore);
  } finally {
    for (const served of processes.reverse()) await stop(served);
    await db.end().catch(() => undefined);
    await database.drop();
  }
}
