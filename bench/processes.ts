// Helpers for the benches that run the compiled CLI as separate processes
// (background.ts, sse-fanout.ts, footprint.ts): a scratch PostgreSQL database, `palai serve`
// by role until its /healthz answers, stopping it, and a process's RSS.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

export const ROOT = new URL('..', import.meta.url).pathname;
export const BIN = join(ROOT, 'bin/palai.mjs');
export const ADMIN_URL = process.env.PALAI_BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const KEY = 'palai_sk_bench_processes_key_0123456789';

export const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
export const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** CPU seconds in user and in system mode the process has used, from /proc/<pid>/stat (clock ticks of 1/100 s). */
export const cpuTimes = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
};

/** CPU seconds (user + system) the process has used. */
export const cpuSeconds = (pid: number) => {
  const { user, system } = cpuTimes(pid);
  return user + system;
};

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The compiled CLI, built if stale. */
export function build(): void {
  spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--quiet'], { stdio: 'inherit' });
}

/** A fresh database on the server ADMIN_URL names, migrated by `palai migrate`; null when the server is unreachable. */
export async function scratchDatabase(label: string): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    console.log(`not measured: ${ADMIN_URL} unreachable (${(error as Error).message})`);
    return null;
  }
  const name = `palai_bench_${label}_${process.pid}_${randomBytes(3).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const drop = async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  };
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const migrated = spawnSync(process.execPath, [BIN, 'migrate'], { cwd: ROOT, env: { ...process.env, PALAI_DATABASE_URL: url.toString() }, encoding: 'utf8' });
  if (migrated.status !== 0) {
    await drop();
    throw new Error(`palai migrate failed: ${migrated.stderr}`);
  }
  return { url: url.toString(), drop };
}

/** The processes started and not yet stopped: killed if the bench itself is interrupted. */
const live = new Set<ChildProcess>();
const killLive = (signal: NodeJS.Signals) => {
  for (const child of live) process.kill(-child.pid!, 'SIGKILL');
  process.exit(signal === 'SIGINT' ? 130 : 143);
};

export interface Served {
  child: ChildProcess;
  base: string;
  role: string;
}

/** `palai serve --role <role>` on its own port (a worker serves /healthz there), until /healthz answers. */
export async function serve(role: 'api' | 'worker' | 'all', env: Record<string, string>): Promise<Served> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve', '--role', role], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, PALAI_LOG_LEVEL: 'warn', ...env, PORT: String(port), PALAI_BOOTSTRAP_API_KEY: KEY },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Its stderr is kept (the last 4 KB) for the error when it does not start, not printed: stopping it prints its shutdown lines there.
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4096)));
  if (live.size === 0) process.once('SIGINT', killLive).once('SIGTERM', killLive);
  live.add(child);
  child.once('exit', () => {
    live.delete(child);
    if (live.size === 0) process.off('SIGINT', killLive).off('SIGTERM', killLive);
  });
  const served = { child, base: `http://127.0.0.1:${port}`, role };
  const deadline = performance.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`palai serve --role ${role} exited with ${child.exitCode}: ${stderr}`);
    if (performance.now() > deadline) {
      await stop(served);
      throw new Error(`palai serve --role ${role}: no /healthz within 30 s: ${stderr}`);
    }
    if (
      await fetch(`${served.base}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return served;
    await sleep(50);
  }
}

/** `count` of them started at once; if one fails to start, the others are stopped. */
export async function serveMany(count: number, role: 'api' | 'worker' | 'all', env: Record<string, string>): Promise<Served[]> {
  const started = await Promise.allSettled(Array.from({ length: count }, () => serve(role, env)));
  const up = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    for (const served of up) await stop(served);
    throw failed.reason;
  }
  return up;
}

/** SIGTERM to the process group, then SIGKILL if it has not exited within 25 s. */
export async function stop(served: { child: ChildProcess }): Promise<void> {
  if (served.child.exitCode !== null || served.child.signalCode !== null) return;
  const exited = new Promise((resolve) => served.child.once('exit', resolve));
  process.kill(-served.child.pid!, 'SIGTERM');
  const timer = setTimeout(() => process.kill(-served.child.pid!, 'SIGKILL'), 25_000);
  await exited;
  clearTimeout(timer);
}

/** A JSON call to the API with the bench's key. */
export async function call<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}
