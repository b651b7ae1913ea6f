// The scheduler under load, on PostgreSQL: BENCH_OBJECTIVES (1,000) objectives of
// one fake-model agent, each with an approved policy and the schedule
// `* * * * * *` (minScheduleSeconds 1), all due every second for BENCH_SECONDS
// (30) s, taken by ONE hub of role worker, whose worker runs every wake.
//
// Setup goes through the wing's API (`hub.surfaces.slices.autonomy`) of an
// api-only hub, not 4×1,000 HTTP calls; then every trigger is put due at one
// whole second S a few seconds ahead, so the window starts with all of them
// due at once. The agent answers each wake with one word (a script choice),
// so a run is as short as the kernel makes it.
//
// The ticks are the bench's own: the worker hub's loop is slowed to one tick
// at its start, and the bench mirrors the loop (a tick every second, again at
// once while one stops at its batch, never two at once), starting 50 ms after
// S. A hub's loop starts at any phase, which adds up to one interval (half on
// average) to every lag below; this one's phase is fixed so the lag is the
// scheduler's own. Calling the ticks here gives each TickOutcome, and runs
// them in an async context the hub's store wrapper recognises, so the
// statements and transactions of the ticks are counted apart from the worker's.
//
// Figures, over the occurrences due in the window: wakes admitted per second,
// skipped per second by reason (`overlap`: the objective's previous wake had
// not ended when the occurrence was taken, the worker being shared by all of
// them; or a trigger reached late has several occurrences on time at once, and
// the first is admitted), and the occurrences still untaken when the window
// closed (a scheduler falling behind). Lag from due time to admission, p50/p99: the ticks' lagsMs (the
// palai_objective_wake_lag_seconds histogram's source: the process's clock
// after the admission, before its commit), and objective_wakes.created_at −
// due_at (the start of the tick's transaction), also for the first and last
// five seconds, to see whether it grows. Transactions per admitted wake:
// pg_stat_database.xact_commit over the whole run (ticks, every wake's run by
// the worker, the LISTEN connection's notification reads, the idle loops;
// a hub start and stop and the bench's own polls subtracted), split into the
// ticks' share and the rest by the store wrapper's counts; statements per tick
// and where the ticks' time goes, by statement; and the claim query's plan
// (EXPLAIN ANALYZE) with every trigger due, after the run. Prints; asserts nothing.
import { onePassAtATime, tickWhileMore } from '../adapters/autonomy/scheduler-loop.js';
import { AsyncLocalStorage } from 'node:async_hooks';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { ObjectivePolicyDocument } from '../generated/schemas.js';
import { startHub } from '../cli/hub.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig, type PalaiConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import type { Db, Queryable } from '../core/store/db.js';
import { PgDb } from '../core/store/pg-db.js';
import type { TickOutcome } from '../core/surfaces/autonomy/autonomy-port.js';
import { record } from './figures.js';
import { ADMIN_URL, build, percentile, scratchDatabase } from './processes.js';

const OBJECTIVES = Number(process.env.BENCH_OBJECTIVES ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const INTERVAL_MS = 1000;
/** How far past each whole second the bench's ticks start. */
const PHASE_MS = 50;
/** Setup calls in flight at once (the pool has 10 connections). */
const SETUP_LANES = 8;
/** The worker hub's loop ticks once at its start, then not within any run of this bench. */
const SLOWED_LOOP_MS = 2 ** 31 - 1;

const POLICY: ObjectivePolicyDocument = {
  objective_scope: 'the bench',
  consequence_classes: ['observe'],
  allowed_tools: null,
  max_tokens: 100_000,
  max_seconds: 600,
  quiet_hours: null,
  expires_at: null,
};

const n = (value: number, digits = 1) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Marks the statements a scheduler tick sends. */
const inTick = new AsyncLocalStorage<true>();

interface Counts {
  statements: number;
  transactions: number;
}

/** What the ticks sent of one statement text: how often, for how long, and one call's parameters (for EXPLAIN). */
interface TickStatement {
  sql: string;
  params: unknown[];
  count: number;
  ms: number;
}

/**
 * The Db port with counts of the statements it sends (BEGIN and COMMIT
 * included) and the transactions they make (a statement outside one is its
 * own): all of them, and those of scheduler ticks, with each tick statement's
 * time. The LISTEN connection is not counted.
 */
class CountingDb implements Db {
  readonly all: Counts = { statements: 0, transactions: 0 };
  readonly ticks: Counts = { statements: 0, transactions: 0 };
  readonly tickStatements = new Map<string, TickStatement>();
  /** The first statement of each tick transaction: the claim. */
  claim: TickStatement | null = null;
  constructor(private readonly inner: Db) {}
  get kind() {
    return this.inner.kind;
  }
  private count(statements: number, transactions: number): void {
    for (const counts of inTick.getStore() ? [this.all, this.ticks] : [this.all]) {
      counts.statements += statements;
      counts.transactions += transactions;
    }
  }
  private async timed<T>(sql: string, params: unknown[], run: () => Promise<T>, first = false): Promise<T> {
    if (!inTick.getStore()) return run();
    const started = performance.now();
    try {
      return await run();
    } finally {
      const key = sql.replace(/\s+/g, ' ').trim();
      const seen = this.tickStatements.get(key) ?? { sql, params, count: 0, ms: 0 };
      seen.count++;
      seen.ms += performance.now() - started;
      this.tickStatements.set(key, seen);
      if (first && !this.claim) this.claim = seen;
    }
  }
  query<Row>(sql: string, params: unknown[] = []) {
    this.count(1, 1);
    return this.timed(sql, params, () => this.inner.query<Row>(sql, params));
  }
  exec(sql: string) {
    this.count(1, 1);
    return this.inner.exec(sql);
  }
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    this.count(2, 1);
    return this.inner.transaction((tx) => {
      let first = true;
      return work({
        query: <Row>(sql: string, params: unknown[] = []) => {
          this.count(1, 0);
          const isFirst = first;
          first = false;
          return this.timed(sql, params, () => tx.query<Row>(sql, params), isFirst);
        },
        exec: (sql: string) => {
          this.count(1, 0);
          return tx.exec(sql);
        },
      });
    });
  }
  listen(channel: string, onMessage: (payload: string) => void) {
    return this.inner.listen(channel, onMessage);
  }
  close() {
    return this.inner.close();
  }
}

/**
 * Committed transactions of `database` so far. A backend reports its counts
 * when it goes idle (at most once a second) and when it exits, so callers
 * close their pools first, and this waits until the figure stops moving.
 */
async function committed(admin: pg.Client, database: string): Promise<number> {
  let last = -1;
  for (;;) {
    await admin.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await admin.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1', [database]);
    const now = Number(rows[0].n);
    if (now === last) return now;
    last = now;
    await sleep(400);
  }
}

function config(overrides: Partial<PalaiConfig> = {}): PalaiConfig {
  return { ...loadConfig({}), logLevel: 'silent', minScheduleSeconds: 1, ...overrides };
}

/** `count` objectives of one agent, each with an approved policy and a schedule every second, through the wing's API. */
async function setUp(url: string, count: number): Promise<{ seconds: number }> {
  const db = new PgDb(url);
  const hub = await startHub({ config: config(), db, role: 'api', logger: createLogger('silent') });
  const started = performance.now();
  try {
    const project = await createProject(db, 'bench-objectives');
    const agent = await hub.api.agents.create(project.id, {
      name: 'bench-watcher',
      model: { provider: 'fake', script_choices: [{ when: { first_call: true }, step: { text: 'Checked.' } }] },
    });
    const autonomy = hub.surfaces.slices.autonomy;
    let made = 0;
    await Promise.all(
      Array.from({ length: SETUP_LANES }, async () => {
        while (made < count) {
          made++;
          const objective = await autonomy.objectives.create(project.id, { agent: agent.id, description: 'Look at the bench every second.', priority: 0 });
          const draft = await autonomy.objectivePolicies.draft(project.id, objective.id, { document: POLICY });
          await autonomy.objectivePolicies.approve(project.id, objective.id, draft.version, draft.hash);
          await autonomy.objectiveTriggers.createSchedule(project.id, objective.id, {
            cron: '* * * * * *',
            catchup_window_seconds: 86_400,
            max_catch_up: 10,
          });
        }
      }),
    );
  } finally {
    await hub.close();
    await db.close();
  }
  return { seconds: (performance.now() - started) / 1000 };
}

interface Tick {
  at: number;
  ms: number;
  outcome: TickOutcome;
}

/**
 * The scheduler loop's schedule, with the bench's ticks: `kicks` kicks one
 * interval apart from `startAt`; a kick while a tick runs runs again after it,
 * and a tick that stopped at its batch ticks again at once, three side by side as the loop does (for good, when
 * every batch finds more due). After the last kick it stops as the loop does.
 */
async function driveTicks(tick: () => Promise<TickOutcome>, startAt: number, kicks: number): Promise<{ ticks: Tick[]; failures: unknown[] }> {
  const ticks: Tick[] = [];
  const failures: unknown[] = [];
  let stopped = false;
  // The loop's own pass: ticks while a batch finds more due, a few side by side, one pass at a time.
  const passes = onePassAtATime(
    () =>
      tickWhileMore(
        async () => {
          const at = Date.now();
          const started = performance.now();
          const outcome = await inTick.run(true, tick);
          ticks.push({ at, ms: performance.now() - started, outcome });
          return outcome;
        },
        () => stopped,
      ),
    () => stopped,
    (error) => void failures.push(error),
  );
  const kick = passes.kick;
  await sleep(Math.max(0, startAt - Date.now()));
  let kicked = 0;
  await new Promise<void>((resolve) => {
    const beat = () => {
      kick();
      if (++kicked === kicks) {
        // As the loop stops: the tick running ends, no other starts.
        stopped = true;
        clearInterval(timer);
        resolve();
      }
    };
    const timer = setInterval(beat, INTERVAL_MS);
    beat();
  });
  await passes.idle();
  return { ticks, failures };
}

/** Polls until no response is queued or running; the polls it sent (each a transaction of the database). */
async function settle(client: pg.Client): Promise<number> {
  for (let polls = 1; ; polls++) {
    const { rows } = await client.query<{ n: string }>("SELECT count(*) AS n FROM responses WHERE status IN ('queued', 'in_progress')");
    if (Number(rows[0].n) === 0) return polls;
    await sleep(200);
  }
}

/** A worker hub started and closed with nothing due: the transactions a start and a stop cost. */
async function idleHub(url: string, admin: pg.Client, database: string): Promise<number> {
  const before = await committed(admin, database);
  const db = new PgDb(url);
  const hub = await startHub({ config: config({ schedulerIntervalMs: SLOWED_LOOP_MS }), db, role: 'worker', logger: createLogger('silent') });
  await hub.close();
  await db.close();
  return (await committed(admin, database)) - before;
}

interface WindowWakes {
  outcomes: Map<string, number>;
  lagMs: number[];
  firstLagMs: number[];
  lastLagMs: number[];
  admittedTotal: number;
}

/** The wakes recorded for occurrences due in [start, start + SECONDS): by outcome and reason, and the admitted ones' created_at − due_at. */
async function windowWakes(client: pg.Client, start: Date): Promise<WindowWakes> {
  const end = new Date(start.getTime() + SECONDS * 1000);
  const outcomes = await client.query<{ what: string; n: string }>(
    `SELECT outcome || coalesce(' ' || reason, '') AS what, count(*) AS n FROM objective_wakes WHERE due_at >= $1 AND due_at < $2 GROUP BY 1 ORDER BY 2 DESC`,
    [start, end],
  );
  const lags = await client.query<{ ms: number; second: number }>(
    `SELECT extract(epoch FROM created_at - due_at) * 1000 AS ms, extract(epoch FROM due_at - $1) AS second
     FROM objective_wakes WHERE outcome = 'admitted' AND due_at >= $1 AND due_at < $2 ORDER BY 1`,
    [start, end],
  );
  const total = await client.query<{ n: string }>("SELECT count(*) AS n FROM objective_wakes WHERE outcome = 'admitted'");
  const rows = lags.rows.map((r) => ({ ms: Number(r.ms), second: Number(r.second) }));
  return {
    outcomes: new Map(outcomes.rows.map((r) => [r.what, Number(r.n)])),
    lagMs: rows.map((r) => r.ms),
    firstLagMs: rows.filter((r) => r.second < 5).map((r) => r.ms),
    lastLagMs: rows.filter((r) => r.second >= SECONDS - 5).map((r) => r.ms),
    admittedTotal: Number(total.rows[0].n),
  };
}

/** The worker's pace: responses completed, from the first admission to the last completion. */
async function runs(client: pg.Client): Promise<{ statuses: string; perSecond: number; p50: number; p99: number }> {
  const statuses = await client.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM responses GROUP BY 1 ORDER BY 2 DESC');
  const span = await client.query<{ seconds: number; n: string }>(
    `SELECT extract(epoch FROM max(completed_at) - min(created_at)) AS seconds, count(*) AS n FROM responses WHERE status = 'completed'`,
  );
  const times = await client.query<{ ms: number }>(
    `SELECT extract(epoch FROM completed_at - created_at) * 1000 AS ms FROM responses WHERE completed_at IS NOT NULL ORDER BY 1`,
  );
  const ms = times.rows.map((r) => Number(r.ms));
  return {
    statuses: statuses.rows.map((r) => `${r.status} ${r.n}`).join(', '),
    perSecond: Number(span.rows[0].n) / Number(span.rows[0].seconds),
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
  };
}

/** The claim's plan with every trigger due (the run over, its wakes and responses in the tables), rolled back. */
async function explainClaim(client: pg.Client, claim: TickStatement | null): Promise<string[]> {
  if (!claim) return ['(no claim was sent)'];
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${claim.sql}`, claim.params);
    return rows.map((r) => r['QUERY PLAN']);
  } finally {
    await client.query('ROLLBACK');
  }
}

/** The worker hub through the window: the bench's ticks from `start`, then until every wake has run; the hub closed. */
async function measureWindow(url: string, start: Date) {
  const db = new CountingDb(new PgDb(url));
  const hub = await startHub({ config: config({ schedulerIntervalMs: SLOWED_LOOP_MS }), db, role: 'worker', logger: createLogger('silent') });
  try {
    if (Date.now() > start.getTime()) console.log(`!! FINDING: the worker hub started ${Date.now() - start.getTime()} ms after the window opened`);
    const tickBaseline = { ...db.ticks };
    const allBaseline = { ...db.all };
    const { ticks, failures } = await driveTicks(() => hub.surfaces.slices.autonomy.scheduler.tick(), start.getTime() + PHASE_MS, SECONDS);
    const windowClosed = new Date();
    const poller = new pg.Client({ connectionString: url });
    await poller.connect();
    const polls = await settle(poller).finally(() => poller.end());
    return {
      db,
      ticks,
      failures,
      polls,
      windowClosed,
      settledAt: new Date(),
      tickCounts: { statements: db.ticks.statements - tickBaseline.statements, transactions: db.ticks.transactions - tickBaseline.transactions },
      hubCounts: { statements: db.all.statements - allBaseline.statements, transactions: db.all.transactions - allBaseline.transactions },
    };
  } finally {
    await hub.close();
    await db.close();
  }
}

export async function benchObjectiveWakes(): Promise<void> {
  console.log(`\n## Objective wakes (PostgreSQL, one worker hub, ${n(OBJECTIVES, 0)} objectives due every second for ${SECONDS} s, fake model)`);
  console.log(
    `load average at the start: ${loadavg()
      .map((l) => n(l, 2))
      .join(', ')} (${cpus().length} CPUs)`,
  );
  build();
  const database = await scratchDatabase('objective_wakes');
  if (!database) return;
  const name = new URL(database.url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  try {
    await admin.connect();
    const idle = await idleHub(database.url, admin, name);
    const setup = await setUp(database.url, OBJECTIVES);
    console.log(
      `setup: ${n(OBJECTIVES, 0)} objectives, policies approved, schedules made through the wing's API in ${n(setup.seconds, 2)} s (${n(OBJECTIVES / setup.seconds, 0)} objectives/s)`,
    );

    // Every trigger due at the same whole second S, far enough ahead for the hub to start and the baseline to be read.
    const bench = new pg.Client({ connectionString: database.url });
    await bench.connect();
    const aligned = await bench.query<{ s: Date }>(
      "UPDATE objective_triggers SET next_due_at = date_trunc('second', now()) + interval '4 seconds' RETURNING next_due_at AS s",
    );
    const start = aligned.rows[0].s;
    await bench.end();
    const before = await committed(admin, name);

    const run = await measureWindow(database.url, start);
    // The bench's own transactions: the alignment came before the baseline, the poller's polls are subtracted.
    const transactions = (await committed(admin, name)) - before - idle - run.polls;

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const wakes = await windowWakes(client, start);
      const done = await runs(client);
      const plan = await explainClaim(client, run.db.claim);
      report({ ...run, wakes, done, plan, transactions, idle, start });
    } finally {
      await client.end();
    }
  } finally {
    await admin.end().catch(() => undefined);
    await database.drop();
  }
}

interface Measured extends Awaited<ReturnType<typeof measureWindow>> {
  wakes: WindowWakes;
  done: Awaited<ReturnType<typeof runs>>;
  plan: string[];
  transactions: number;
  idle: number;
  start: Date;
}

/** A percentile of sorted milliseconds, as text ("none" of an empty list). */
const msAt = (sorted: number[], p: number) => (sorted.length === 0 ? 'none' : `${n(percentile(sorted, p), 0)} ms`);

function report(m: Measured): void {
  const occurrences = OBJECTIVES * SECONDS;
  const recorded = [...m.wakes.outcomes.values()].reduce((a, b) => a + b, 0);
  const untaken = occurrences - recorded;
  const admitted = m.wakes.outcomes.get('admitted') ?? 0;
  const skipped = [...m.wakes.outcomes].filter(([what]) => what.startsWith('skipped ')).map(([what, count]) => [what.slice(8), count] as const);
  const lagsOf = (ticks: Tick[]) => ticks.flatMap((t) => t.outcome.lagsMs).sort((a, b) => a - b);
  const tickLags = lagsOf(m.ticks);
  const firstTickLags = lagsOf(m.ticks.filter((t) => t.at < m.start.getTime() + 5000));
  const lastTickLags = lagsOf(m.ticks.filter((t) => t.at >= m.start.getTime() + (SECONDS - 5) * 1000));
  const busy = m.ticks.filter((t) => t.outcome.claimed > 0);
  const tickMs = busy.map((t) => t.ms).sort((a, b) => a - b);
  const claimed = m.ticks.reduce((sum, t) => sum + t.outcome.claimed, 0);
  const tickTransactions = m.ticks.reduce((sum, t) => sum + t.outcome.transactions, 0);
  const perWake = (x: number) => n(x / m.wakes.admittedTotal, 2);

  console.log(
    `wakes admitted: ${n(admitted / SECONDS)}/s (${admitted} of ${occurrences} occurrences due in the window); ` +
      (skipped.length ? `skipped ${skipped.map(([reason, count]) => `${reason} ${n(count / SECONDS)}/s`).join(', ')}` : 'none skipped') +
      `; ${untaken} not yet taken when the window closed`,
  );
  console.log(
    `lag due → admission: ticks' lagsMs p50 ${msAt(tickLags, 50)}, p99 ${msAt(tickLags, 99)} ` +
      `(p50 in the ticks of the first 5 s ${msAt(firstTickLags, 50)}, of the last 5 s ${msAt(lastTickLags, 50)}); ` +
      `created_at − due_at p50 ${msAt(m.wakes.lagMs, 50)}, p99 ${msAt(m.wakes.lagMs, 99)} ` +
      `(p50 of those due in the first 5 s ${msAt(m.wakes.firstLagMs, 50)}, in the last 5 s ${msAt(m.wakes.lastLagMs, 50)}); ticks start ${PHASE_MS} ms past the second`,
  );
  console.log(
    `ticks: ${m.ticks.length}, ${busy.length} of them claiming ${claimed} triggers in all; a busy tick p50 ${msAt(tickMs, 50)}, p99 ${msAt(tickMs, 99)}, ` +
      `max ${msAt(tickMs, 100)}; ${m.failures.length} failed${m.failures.length ? ` (the first: ${(m.failures[0] as Error).message})` : ''}`,
  );
  console.log(
    `worker: ${m.done.statuses}; ${n(m.done.perSecond)} completed/s (first admission → last completion), completed_at − created_at p50 ${n(m.done.p50, 0)} ms, p99 ${n(m.done.p99, 0)} ms; ` +
      `settled ${n((m.settledAt.getTime() - m.windowClosed.getTime()) / 1000, 2)} s after the window closed`,
  );
  console.log(
    `transactions per admitted wake (xact_commit, ${m.wakes.admittedTotal} admitted in all): ${perWake(m.transactions)} ` +
      `(a hub start and stop, ${m.idle}, and the bench's polls subtracted); the hub's pool counted ${perWake(m.hubCounts.transactions)} of them: ` +
      `the ticks ${perWake(m.tickCounts.transactions)} (TickOutcome.transactions summed: ${tickTransactions}), the worker and the idle loops ` +
      `${perWake(m.hubCounts.transactions - m.tickCounts.transactions)}; the rest, ${perWake(m.transactions - m.hubCounts.transactions)}, ` +
      `is the LISTEN connection's notification reads and connection starts`,
  );
  console.log(
    `statements: ${perWake(m.tickCounts.statements)} a wake in the ticks (${n(m.tickCounts.statements / Math.max(1, claimed), 1)} a claimed trigger, ` +
      `${n(m.tickCounts.statements / Math.max(1, busy.length), 0)} a busy tick), ${perWake(m.hubCounts.statements - m.tickCounts.statements)} a wake in the worker and the rest`,
  );
  const statementMs = [...m.db.tickStatements.values()].reduce((sum, s) => sum + s.ms, 0);
  const wallMs = m.ticks.reduce((sum, t) => sum + t.ms, 0);
  console.log(
    `where the ticks' ${n(wallMs / 1000, 2)} s go: ${n(statementMs / 1000, 2)} s waiting on their statements one after another (BEGIN and COMMIT not included), ` +
      `the rest in the process; the statements taking most of it:`,
  );
  for (const s of [...m.db.tickStatements.values()].sort((a, b) => b.ms - a.ms).slice(0, 8)) {
    console.log(`  ${n(s.ms / 1000, 2)} s, ${s.count}×, ${n(s.ms / s.count, 2)} ms each: ${s.sql.replace(/\s+/g, ' ').slice(0, 110)}`);
  }
  console.log(
    `load average at the end: ${loadavg()
      .map((l) => n(l, 2))
      .join(', ')}`,
  );
  console.log('the claim with every trigger due, after the run (EXPLAIN ANALYZE, rolled back):');
  for (const line of m.plan) console.log(`  ${line}`);
  const missed = skipped.find(([reason]) => reason === 'missed')?.[1] ?? 0;
  if (untaken > 0 || missed > 0)
    console.log(
      `!! FINDING: one scheduler does not keep up with ${OBJECTIVES} objectives due every second: ${untaken} occurrences untaken at the end, ${missed} missed ` +
        `(taken later than the grace), the lag p50 ${msAt(firstTickLags, 50)} in the first 5 s and ${msAt(lastTickLags, 50)} in the last`,
    );

  const quiet = { print: false };
  const figure = (name: string, value: number, unit: string, note?: string) => record({ name: `objective wakes, ${name}`, value, unit, note }, quiet);
  figure('admitted/s', admitted / SECONDS, 'wakes/s', `${OBJECTIVES} objectives due every second for ${SECONDS} s, one worker hub`);
  for (const [reason, count] of skipped) figure(`skipped ${reason}/s`, count / SECONDS, 'wakes/s');
  figure('occurrences untaken when the window closed', untaken, 'occurrences');
  figure('lag p50 (ticks lagsMs)', percentile(tickLags, 50), 'ms', `p99 ${msAt(tickLags, 99)}`);
  figure('lag p99 (ticks lagsMs)', percentile(tickLags, 99), 'ms');
  figure('transactions per admitted wake (xact_commit)', m.transactions / m.wakes.admittedTotal, 'transactions');
  figure("the scheduler's transactions per admitted wake", m.tickCounts.transactions / m.wakes.admittedTotal, 'transactions');
  figure("the scheduler's statements per admitted wake", m.tickCounts.statements / m.wakes.admittedTotal, 'statements');
}
