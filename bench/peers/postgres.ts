// What the bench reads from PostgreSQL: a fresh database per system, its
// committed transactions (pg_stat_database), the rows inserted and updated in
// its tables (pg_stat_user_tables) and their size with indexes and TOAST
// (pg_total_relation_size), and the server's one-row-insert ceiling (pgbench).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';

export const ADMIN_URL = process.env.PALAI_BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const run = promisify(execFile);

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

export interface Database {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function freshDatabase(label: string): Promise<Database> {
  const name = `palai_peers_${label}_${process.pid}_${randomBytes(3).toString('hex')}`;
  await withClient(ADMIN_URL, (admin) => admin.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => withClient(ADMIN_URL, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/**
 * xact_commit of the database after `waitMs`. A backend publishes its counts
 * when it exits, or once idle, but up to 10 s later if it published less than
 * a second before (PostgreSQL's PGSTAT_IDLE_INTERVAL): so a reading is taken
 * 11 s after a load ends, or once the system's process has stopped.
 */
export async function committed(database: string, waitMs: number): Promise<number> {
  await sleep(waitMs);
  return withClient(ADMIN_URL, async (admin) => {
    const { rows } = await admin.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1', [database]);
    return Number(rows[0].n);
  });
}

export interface Tables {
  inserted: number;
  updated: number;
  bytes: number;
}

/** Every user table of the database (any schema): rows inserted and updated so far, and bytes with indexes and TOAST. */
export async function tables(url: string): Promise<Tables> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ inserted: string; updated: string; bytes: string }>(
      `SELECT COALESCE(sum(n_tup_ins), 0)::text AS inserted, COALESCE(sum(n_tup_upd), 0)::text AS updated,
              COALESCE(sum(pg_total_relation_size(relid)), 0)::text AS bytes
         FROM pg_stat_user_tables`,
    );
    return { inserted: Number(rows[0].inserted), updated: Number(rows[0].updated), bytes: Number(rows[0].bytes) };
  });
}

export interface Ceiling {
  tool: string;
  /** One-row INSERT commits per second from 1 and from 16 connections. */
  one: number;
  sixteen: number;
}

const CEILING_INSERT = `INSERT INTO bench_ceiling (response_id, sequence, data) VALUES ('resp_bench', :s, '{"type":"text.delta","delta":"word"}');`;

async function pgbench(url: string, clients: number, seconds: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'palai-peers-'));
  const script = join(dir, 'insert.sql');
  writeFileSync(script, `\\set s random(1, 1000000000)\n${CEILING_INSERT}\n`);
  try {
    const args = ['-n', '-M', 'prepared', '-T', String(seconds), '-c', String(clients), '-j', String(Math.min(clients, 2)), '-f', script, url];
    const { stdout } = await run('pgbench', args, { timeout: (seconds + 30) * 1000 });
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
    if (!tps) throw new Error(`pgbench printed no tps: ${stdout}`);
    return Number(tps[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same load from node when pgbench is not installed. */
async function nodeInserts(url: string, clients: number, seconds: number): Promise<number> {
  const connections = await Promise.all(
    Array.from({ length: clients }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  const until = performance.now() + seconds * 1000;
  let commits = 0;
  const text = CEILING_INSERT.replace(':s', '$1');
  await Promise.all(
    connections.map(async (client) => {
      while (performance.now() < until) {
        await client.query({ name: 'ceiling', text, values: [Math.floor(Math.random() * 1e9)] });
        commits++;
      }
    }),
  );
  await Promise.all(connections.map((c) => c.end()));
  return commits / seconds;
}

export async function ceiling(url: string, seconds: number): Promise<Ceiling> {
  await withClient(url, (client) =>
    client.query(
      'CREATE TABLE IF NOT EXISTS bench_ceiling (response_id text NOT NULL, sequence bigint NOT NULL, data jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
    ),
  );
  const installed = await run('pgbench', ['--version']).then(
    () => true,
    () => false,
  );
  const measure = installed ? pgbench : nodeInserts;
  return {
    tool: installed ? 'pgbench' : 'node one-row INSERT commits (pgbench is not installed)',
    one: await measure(url, 1, seconds),
    sixteen: await measure(url, 16, seconds),
  };
}
