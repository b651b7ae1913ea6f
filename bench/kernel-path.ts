// The kernel's hot path on PostgreSQL, against the database's own limit: a
// synchronous one-step response on the fake model, measured in database
// transactions per response (pg_stat_database's xact_commit, which counts a
// statement outside BEGIN…COMMIT as a transaction of its own), statements per
// response, sequential p50/p99, 16-client throughput, and the WAL and
// multixacts a response makes at 16 clients — beside PostgreSQL's
// ceiling on this machine in the same run (pgbench, one-row INSERT commits from
// 1 and 16 connections, the shape of a journal append). Each figure is printed
// with its ratio to the goal and to ceiling ÷ transactions per response.
// Runs in a fresh database on the server PALAI_BENCH_POSTGRES_URL names (a user
// that may create databases; default the local one). The clients run in a
// worker thread, so the hub's event loop is the hub's alone, as it is in
// production. Prints; asserts nothing.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { record } from './figures.js';
import { percentile } from './processes.js';
import { startHub } from '../cli/hub.js';
import { createApiKey } from '../core/auth/api-keys.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import type { Db, Queryable } from '../core/store/db.js';
import { migrate } from '../core/store/migrate.js';
import { PgDb } from '../core/store/pg-db.js';

const SERVER_URL = process.env.PALAI_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SEQUENTIAL = Number(process.env.PALAI_BENCH_REQUESTS ?? 200);
const CLIENTS = 16;
const CONCURRENT = Number(process.env.PALAI_BENCH_CONCURRENT_REQUESTS ?? 3000);
const WARMUP = 50;
const CEILING_SECONDS = Number(process.env.PALAI_BENCH_CEILING_SECONDS ?? 5);
const INPUT = 'one two three';
const GOALS = { transactions: 5, p50Ms: 15, throughput: 250 };

const run = promisify(execFile);
const n = (value: number, digits = 1) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/**
 * The Db port with a count of the statements it sends (BEGIN and COMMIT
 * included) and of the transactions they make (a statement outside one is its
 * own); the LISTEN connection is not counted.
 */
class CountingDb implements Db {
  statements = 0;
  transactions = 0;
  constructor(private readonly inner: Db) {}
  get kind() {
    return this.inner.kind;
  }
  query<Row>(sql: string, params?: unknown[]) {
    this.statements++;
    this.transactions++;
    return this.inner.query<Row>(sql, params);
  }
  exec(sql: string) {
    this.statements++;
    this.transactions++;
    return this.inner.exec(sql);
  }
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    this.statements += 2;
    this.transactions++;
    return this.inner.transaction((tx) =>
      work({
        query: <Row>(sql: string, params?: unknown[]) => {
          this.statements++;
          return tx.query<Row>(sql, params);
        },
        exec: (sql: string) => {
          this.statements++;
          return tx.exec(sql);
        },
      }),
    );
  }
  listen(channel: string, onMessage: (payload: string) => void) {
    return this.inner.listen(channel, onMessage);
  }
  close() {
    return this.inner.close();
  }
}

async function withServer<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Committed transactions of the database so far. A backend reports its counts
 * when it goes idle (at most once a second) and when it exits, so phases end by
 * closing their pool, and this waits until the figure stops moving.
 */
async function committed(database: string): Promise<number> {
  return withServer(async (client) => {
    let last = -1;
    for (;;) {
      await client.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await client.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1', [database]);
      const now = Number(rows[0].n);
      if (now === last) return now;
      last = now;
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
  });
}

/**
 * The server's WAL position and next multixact id. A multixact is made when a
 * second live transaction locks a row another holds (the foreign-key checks'
 * FOR KEY SHARE of a row every response names); the counter is read from the
 * control file, so a checkpoint first. Server-wide: nothing else may run.
 */
async function walAndMultixacts(): Promise<{ lsn: string; multixact: number }> {
  return withServer(async (client) => {
    await client.query('CHECKPOINT');
    const { rows } = await client.query<{ lsn: string; multixact: string }>(
      'SELECT pg_current_wal_lsn()::text AS lsn, (SELECT next_multixact_id FROM pg_control_checkpoint())::text AS multixact',
    );
    return { lsn: rows[0].lsn, multixact: Number(rows[0].multixact) };
  });
}

async function walBytesSince(lsn: string): Promise<number> {
  return withServer(async (client) => {
    const { rows } = await client.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS bytes', [lsn]);
    return Number(rows[0].bytes);
  });
}

interface Target {
  url: string;
  database: string;
  secret: string;
  agent: string;
}

interface PhaseFigures {
  latencies: number[];
  seconds: number;
  statements: number;
  /** As the client counted them, requests only. */
  clientTransactions: number;
  /** As pg_stat_database counted them, the hub's start and stop included. */
  transactions: number;
}

/**
 * The clients: `clients` keep-alive connections, each sending the next request
 * when its answer has come, until `requests` were sent. Each answer must be a
 * completed response. Runs in a worker thread; posts the latencies and the time.
 */
const LOAD = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, headers, body, requests, clients } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
const post = () => new Promise((resolve, reject) => {
  const req = http.request(url, { method: 'POST', headers, agent }, (res) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => (text += chunk));
    res.on('end', () => {
      const status = JSON.parse(text).status;
      if (status === 'completed') resolve();
      else reject(new Error('a bench response ended ' + text.slice(0, 300)));
    });
  });
  req.on('error', reject);
  req.end(body);
});
(async () => {
  const latencies = [];
  let sent = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (sent < requests) {
      sent++;
      const t0 = performance.now();
      await post();
      latencies.push(performance.now() - t0);
    }
  }));
  parentPort.postMessage({ latencies, seconds: (performance.now() - started) / 1000 });
  agent.destroy();
})().catch((error) => { throw error; });
`;

function load(workerData: {
  url: string;
  headers: Record<string, string>;
  body: string;
  requests: number;
  clients: number;
}): Promise<{ latencies: number[]; seconds: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(LOAD, { eval: true, workerData });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

/** A hub on its own pool, `requests` sync responses from `clients` clients, the pool closed: what it cost. */
async function phase(target: Target, requests: number, clients: number): Promise<PhaseFigures> {
  const before = await committed(target.database);
  const db = new CountingDb(new PgDb(target.url));
  const hub = await startHub({ config: { ...loadConfig({}), logLevel: 'silent' }, db, logger: createLogger('silent') });
  const server = hub.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/responses`;
  const headers = { authorization: `Bearer ${target.secret}`, 'content-type': 'application/json' };
  const body = JSON.stringify({ model: target.agent, input: INPUT });
  const statementsBefore = db.statements;
  const transactionsBefore = db.transactions;
  const { latencies, seconds } = requests > 0 ? await load({ url, headers, body, requests, clients }) : { latencies: [], seconds: 0 };
  const statements = db.statements - statementsBefore;
  const clientTransactions = db.transactions - transactionsBefore;
  await new Promise((resolve) => server.close(resolve));
  await hub.close();
  await db.close();
  return { latencies: latencies.sort((a, b) => a - b), seconds, statements, clientTransactions, transactions: (await committed(target.database)) - before };
}

interface Ceiling {
  tool: string;
  /** Commits per second. */
  one: number;
  sixteen: number;
}

const CEILING_INSERT = `INSERT INTO bench_ceiling (response_id, sequence, data) VALUES ('resp_bench', :s, '{"type":"text.delta","delta":"word"}');`;

async function pgbench(url: string, clients: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'palai-bench-'));
  const script = join(dir, 'insert.sql');
  writeFileSync(script, `\\set s random(1, 1000000000)\n${CEILING_INSERT}\n`);
  try {
    const args = ['-n', '-M', 'prepared', '-T', String(CEILING_SECONDS), '-c', String(clients), '-j', String(Math.min(clients, 2)), '-f', script, url];
    const { stdout } = await run('pgbench', args, { timeout: (CEILING_SECONDS + 30) * 1000 });
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
    if (!tps) throw new Error(`pgbench printed no tps: ${stdout}`);
    return Number(tps[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same load from node when pgbench is not installed: one-row INSERT commits on `clients` connections. */
async function nodeInserts(url: string, clients: number): Promise<number> {
  const connections = await Promise.all(
    Array.from({ length: clients }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  const until = performance.now() + CEILING_SECONDS * 1000;
  let commits = 0;
  const sql = CEILING_INSERT.replace(':s', '$1');
  await Promise.all(
    connections.map(async (client) => {
      while (performance.now() < until) {
        await client.query({ name: 'ceiling', text: sql, values: [Math.floor(Math.random() * 1e9)] });
        commits++;
      }
    }),
  );
  await Promise.all(connections.map((c) => c.end()));
  return commits / CEILING_SECONDS;
}

async function ceiling(url: string): Promise<Ceiling> {
  const db = new PgDb(url, 1);
  await db.exec(
    'CREATE TABLE bench_ceiling (response_id text NOT NULL, sequence bigint NOT NULL, data jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
  );
  await db.close();
  const installed = await run('pgbench', ['--version']).then(
    () => true,
    () => false,
  );
  const measure = installed ? pgbench : nodeInserts;
  return {
    tool: installed ? 'pgbench' : 'node one-row INSERT commits (pgbench is not installed)',
    one: await measure(url, 1),
    sixteen: await measure(url, 16),
  };
}

/** value ÷ goal for a figure where more is better, goal ÷ value where less is. */
function versus(value: number, goal: number, more: boolean): string {
  const ratio = more ? value / goal : goal / value;
  return `${n(ratio, 2)}× goal (${ratio >= 1 ? 'meets' : 'misses'})`;
}

export async function benchKernelPath(): Promise<void> {
  const reachable = await withServer(async () => true).catch((error: Error) => {
    console.log(`\n## Kernel path, PostgreSQL: skipped (${SERVER_URL} unreachable: ${error.message})`);
    return false;
  });
  if (!reachable) return;
  const database = `palai_bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  await withServer((client) => client.query(`CREATE DATABASE ${database}`));
  const url = new URL(SERVER_URL);
  url.pathname = `/${database}`;
  try {
    const target: Target = { url: url.toString(), database, secret: '', agent: 'bench-echo' };
    const setup = new PgDb(target.url, 2);
    await migrate(setup);
    const project = await createProject(setup, 'bench');
    target.secret = (await createApiKey(setup, project.id, 'bench')).secret;
    await setup.close();
    const ceil = await ceiling(target.url);

    // The agent, and a warm process (JIT, prepared paths), before anything is counted.
    const warm = await startHub({ config: { ...loadConfig({}), logLevel: 'silent' }, logger: createLogger('silent'), db: new PgDb(target.url) });
    await warm.api.agents.create(project.id, { name: target.agent, model: { provider: 'fake' } });
    await warm.close();
    await warm.kernel.db.close();
    await phase(target, WARMUP, 4);

    const idle = await phase(target, 0, 1);
    const sequential = await phase(target, SEQUENTIAL, 1);
    const concurrent = await phase(target, CONCURRENT, CLIENTS);
    // A phase of its own, so the checkpoints it needs touch none of the timed ones.
    const marked = await walAndMultixacts();
    await phase(target, CONCURRENT, CLIENTS);
    const walPerResponse = (await walBytesSince(marked.lsn)) / CONCURRENT;
    const multixactsPerResponse = ((await walAndMultixacts()).multixact - marked.multixact) / CONCURRENT;
    const perResponse = (figures: PhaseFigures, requests: number) => (figures.transactions - idle.transactions) / requests;
    const txSequential = perResponse(sequential, SEQUENTIAL);
    const txConcurrent = perResponse(concurrent, CONCURRENT);
    const p50 = percentile(sequential.latencies, 50);
    const p99 = percentile(sequential.latencies, 99);
    const throughput = CONCURRENT / concurrent.seconds;
    const commitMs = 1000 / ceil.one;
    const latencyCeiling = txSequential * commitMs;
    const throughputCeiling = ceil.sixteen / txConcurrent;

    console.log(`\n## Kernel path, PostgreSQL (synchronous one-step fake response, ${JSON.stringify(INPUT)})`);
    console.log(
      `ceiling (${ceil.tool}): 1 client ${n(ceil.one, 0)} commits/s (${n(commitMs, 2)} ms a commit), ${CLIENTS} clients ${n(ceil.sixteen, 0)} commits/s`,
    );
    console.log(
      `transactions per response: ${n(txSequential, 2)} sequential, ${n(txConcurrent, 2)} with ${CLIENTS} clients (hub start and stop, ${idle.transactions}, subtracted) — goal ≤ ${GOALS.transactions}: ${versus(Math.max(txSequential, txConcurrent), GOALS.transactions, false)}`,
    );
    console.log(
      `as the hub's client counts them: ${n(sequential.clientTransactions / SEQUENTIAL, 2)} transactions and ${n(sequential.statements / SEQUENTIAL)} statements per response sequential, ` +
        `${n(concurrent.clientTransactions / CONCURRENT, 2)} and ${n(concurrent.statements / CONCURRENT)} with ${CLIENTS} clients`,
    );
    console.log(
      `sequential (${SEQUENTIAL}): p50 ${n(p50, 2)} ms, p99 ${n(p99, 2)} ms — goal p50 ≤ ${GOALS.p50Ms} ms: ${versus(p50, GOALS.p50Ms, false)}; ` +
        `ceiling ${n(txSequential, 2)} × ${n(commitMs, 2)} ms = ${n(latencyCeiling, 2)} ms: ${n((100 * latencyCeiling) / p50)}% of it`,
    );
    console.log(
      `throughput (${CLIENTS} clients, ${CONCURRENT} responses): ${n(throughput)} responses/s, p50 ${n(percentile(concurrent.latencies, 50), 1)} ms, p99 ${n(percentile(concurrent.latencies, 99), 1)} ms — goal ≥ ${GOALS.throughput}/s: ${versus(throughput, GOALS.throughput, true)}; ` +
        `ceiling ${n(ceil.sixteen, 0)} ÷ ${n(txConcurrent, 2)} = ${n(throughputCeiling, 0)}/s: ${n((100 * throughput) / throughputCeiling)}% of it`,
    );
    console.log(
      `with ${CLIENTS} clients (${CONCURRENT} more responses): ${n(walPerResponse, 0)} B of WAL and ${n(multixactsPerResponse, 2)} multixacts per response (the hub's start and stop included)`,
    );
    // The same figures, kept for bench/results.json.
    const quiet = { print: false };
    record(
      {
        name: 'transactions per one-step response, sequential',
        value: txSequential,
        unit: 'transactions',
        goal: { value: GOALS.transactions, better: 'lower' },
      },
      quiet,
    );
    record(
      {
        name: `transactions per one-step response, ${CLIENTS} clients`,
        value: txConcurrent,
        unit: 'transactions',
        goal: { value: GOALS.transactions, better: 'lower' },
      },
      quiet,
    );
    record(
      {
        name: 'sequential p50 of a sync one-step response',
        value: p50,
        unit: 'ms',
        goal: { value: GOALS.p50Ms, better: 'lower' },
        note: `p99 ${n(p99, 2)} ms`,
      },
      quiet,
    );
    record(
      {
        name: `sync one-step responses/s, ${CLIENTS} clients`,
        value: throughput,
        unit: 'responses/s',
        goal: { value: GOALS.throughput, better: 'higher' },
        note: `${n((100 * throughput) / throughputCeiling)}% of the ceiling ÷ transactions`,
      },
      quiet,
    );
    record({ name: `WAL per one-step response, ${CLIENTS} clients`, value: walPerResponse, unit: 'B' }, quiet);
    record({ name: `multixacts per one-step response, ${CLIENTS} clients`, value: multixactsPerResponse, unit: 'multixacts' }, quiet);
    record(
      {
        name: `PostgreSQL ceiling (${ceil.tool}), one-row commits, 1 / ${CLIENTS} clients`,
        value: ceil.sixteen,
        unit: 'commits/s',
        note: `1 client ${n(ceil.one, 0)} commits/s`,
      },
      quiet,
    );
  } finally {
    await withServer((client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)).catch(() => undefined);
  }
}
