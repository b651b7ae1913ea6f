// The footprint of `palai serve` as an operator meets it, through the compiled
// CLI (bin/palai.mjs → dist/): start to /healthz on PostgreSQL, idle memory on
// PostgreSQL and on the embedded store, the first start on a fresh embedded
// store, one CLI command, and a 1 MB input on the fake model. PostgreSQL is a
// scratch database created and dropped here (PALAI_BENCH_ADMIN_URL, default the
// local server). Prints figures; asserts nothing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { record } from './figures.js';
import { ADMIN_URL, BIN, build, freePort, ROOT, rssMb, stop } from './processes.js';

const KEY = 'palai_sk_bench_footprint_key_0123456789';
const RUNS = 3;
const IDLE_MS = 5_000;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

interface Served {
  child: ChildProcess;
  base: string;
  startedMs: number;
}

/** `palai serve` until /healthz answers; the time it took. */
async function serve(env: Record<string, string>, viaNpm = false): Promise<Served> {
  const port = await freePort();
  const started = performance.now();
  const [command, args] = viaNpm ? ['npm', ['start', '--silent']] : [process.execPath, [BIN, 'serve']];
  // Its own process group, so stopping `npm start` stops the server it started.
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, ...env, PORT: String(port), PALAI_BOOTSTRAP_API_KEY: KEY, PALAI_LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`palai serve exited with ${child.exitCode}`);
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { child, base, startedMs: performance.now() - started };
    await sleep(20);
  }
}

async function largeInput(served: Served, databaseUrl: string): Promise<void> {
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  await fetch(`${served.base}/v1/agents`, { method: 'POST', headers, body: JSON.stringify({ name: 'echo', model: { provider: 'fake' } }) });
  const input = 'lorem '.repeat(174_762).slice(0, 1_048_000);
  const started = performance.now();
  const res = await fetch(`${served.base}/v1/responses`, { method: 'POST', headers, body: JSON.stringify({ model: 'echo', input }) });
  const body = (await res.json()) as { id: string };
  const ms = performance.now() - started;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM response_events WHERE response_id = $1', [body.id]);
  await client.end();
  record({
    name: 'one 1 MB input on the fake model: journal events',
    value: Number(rows[0].n),
    unit: 'events',
    note: `answered in ${(ms / 1000).toFixed(2)} s; the echo stops at 200 words`,
  });
}

async function onPostgres(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  try {
    await admin.connect();
  } catch (error) {
    console.log(`PostgreSQL figures not measured: ${(error as Error).message}`);
    return;
  }
  const name = `palai_bench_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  try {
    // The first start migrates; the figures are of the starts after it.
    await stop(await serve({ PALAI_DATABASE_URL: databaseUrl }));
    const starts: number[] = [];
    let last: Served | null = null;
    for (let i = 0; i < RUNS; i++) {
      if (last) await stop(last);
      last = await serve({ PALAI_DATABASE_URL: databaseUrl });
      starts.push(last.startedMs);
    }
    record({ name: 'node bin/palai.mjs serve → /healthz on PostgreSQL (median)', value: median(starts), unit: 'ms', goal: { value: 1500, better: 'lower' } });
    const npmStarts: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const served = await serve({ PALAI_DATABASE_URL: databaseUrl }, true);
      npmStarts.push(served.startedMs);
      await stop(served);
    }
    record({
      name: 'npm start → /healthz on PostgreSQL (median; npm and the build check included)',
      value: median(npmStarts),
      unit: 'ms',
      goal: { value: 1500, better: 'lower' },
    });
    await sleep(IDLE_MS);
    record({ name: 'idle RSS on PostgreSQL', value: rssMb(last!.child.pid!), unit: 'MB', goal: { value: 120, better: 'lower' } });
    await largeInput(last!, databaseUrl);
    await stop(last!);
    const cli: number[] = [];
    for (let i = 0; i < RUNS + 2; i++) {
      const t0 = performance.now();
      spawnSync(process.execPath, [BIN, 'projects', 'list'], { env: { ...process.env, PALAI_DATABASE_URL: databaseUrl }, stdio: 'ignore' });
      cli.push(performance.now() - t0);
    }
    record({ name: 'palai projects list against PostgreSQL (median)', value: median(cli), unit: 'ms', goal: { value: 1000, better: 'lower' } });
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

async function onEmbeddedStore(): Promise<void> {
  const starts: number[] = [];
  let rss = 0;
  for (let i = 0; i < RUNS; i++) {
    const home = mkdtempSync(join(tmpdir(), 'palai-bench-home-'));
    try {
      const served = await serve({ PALAI_HOME: home, PALAI_DATABASE_URL: '' });
      starts.push(served.startedMs);
      if (i === RUNS - 1) {
        await sleep(IDLE_MS);
        rss = rssMb(served.child.pid!);
      }
      await stop(served);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }
  record({ name: 'first start on a fresh embedded store → /healthz (median)', value: median(starts), unit: 'ms', goal: { value: 4000, better: 'lower' } });
  record({ name: 'idle RSS on the embedded store', value: rss, unit: 'MB', goal: { value: 250, better: 'lower' } });
}

export async function benchFootprint(): Promise<void> {
  console.log('\n## Footprint (compiled CLI)');
  build();
  await onPostgres();
  await onEmbeddedStore();
}
