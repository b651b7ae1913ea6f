// The three systems under test, each its own process on its own fresh database,
// each answering one request with the fake server's 20-word answer: Palai
// (`palai serve` of BENCH_PEERS_PALAI_ROOT, default this checkout; an agent on
// an openai-chat model connection; one synchronous POST /v1/responses), DBOS
// Transact and LangGraph.js (dbos-server.ts and langgraph-server.ts behind
// POST /respond). A database lives for the whole run, a process for one round.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jsonPoster } from './client.ts';
import { freshDatabase, type Database } from './postgres.ts';

export const PALAI_ROOT = process.env.BENCH_PEERS_PALAI_ROOT ?? new URL('../..', import.meta.url).pathname;
const KEY = 'palai_sk_bench_peers_key_0123456789';
const AGENT = 'bench-peers';

export const SYSTEMS = ['Palai', 'DBOS', 'LangGraph'] as const;
export type SystemName = (typeof SYSTEMS)[number];

export interface Running {
  /** The process whose CPU and RSS are the system's. */
  pid: number;
  /** One response to `input`; its text (over keep-alive connections, as many as the clients). */
  respond(input: string): Promise<string>;
  stop(): Promise<void>;
}

export interface Deployment {
  database: Database;
  /** Starts the process; `clients` callers will call `respond` at once at most. */
  start(chatBaseUrl: string, clients: number): Promise<Running>;
}

/** The peers' processes and the fake server (each leading its own process group) not yet stopped: killed when the bench exits or is interrupted. */
const live = new Set<ChildProcess>();
const killLive = () => {
  for (const child of live) process.kill(-child.pid!, 'SIGKILL');
};
process.once('exit', killLive);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

export function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `node <args>` in its own process group on a free port, until GET /healthz answers; SIGTERM stops it. */
async function startServer(
  name: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ base: string; pid: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd,
    detached: true,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  track(child);
  // Its stderr is kept for the error when it does not start, not printed.
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4096)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-child.pid!, 'SIGTERM');
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 25_000);
    await exited;
    clearTimeout(timer);
  };
  const base = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${stderr}`);
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`${name}: no /healthz within 60 s: ${stderr}`);
    }
    const up = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { base, pid: child.pid!, stop };
    await sleep(50);
  }
}

interface PalaiResponse {
  status: string;
  output: { content?: { text?: string }[] }[];
}

async function deployPalai(): Promise<Deployment> {
  spawnSync(process.execPath, [join(PALAI_ROOT, 'scripts/build.mjs'), '--quiet'], { stdio: 'inherit' });
  const database = await freshDatabase('palai');
  const migrated = spawnSync(process.execPath, [join(PALAI_ROOT, 'bin/palai.mjs'), 'migrate'], {
    cwd: PALAI_ROOT,
    env: { ...process.env, PALAI_DATABASE_URL: database.url },
    encoding: 'utf8',
  });
  if (migrated.status !== 0) throw new Error(`palai migrate failed: ${migrated.stderr}`);
  const headers = { authorization: `Bearer ${KEY}` };
  let configured = false;
  return {
    database,
    start: async (chatBaseUrl, clients) => {
      const served = await startServer('palai serve', [join(PALAI_ROOT, 'bin/palai.mjs'), 'serve', '--role', 'all'], PALAI_ROOT, {
        PALAI_DATABASE_URL: database.url,
        PALAI_BOOTSTRAP_API_KEY: KEY,
        PALAI_LOG_LEVEL: 'warn',
        PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1',
      });
      const post = jsonPoster(served.base, headers, clients);
      if (!configured) {
        await post('/v1/model_connections', { name: 'fake-openai', provider: 'openai-chat', base_url: chatBaseUrl, default_model: 'bench' });
        await post('/v1/agents', { name: AGENT, model: { connection: 'fake-openai' } });
        configured = true;
      }
      return {
        pid: served.pid,
        stop: served.stop,
        respond: async (input) => {
          const response = (await post('/v1/responses', { model: AGENT, input })) as PalaiResponse;
          if (response.status !== 'completed') throw new Error(`Palai answered ${response.status}`);
          return response.output.flatMap((item) => (item.content ?? []).map((part) => part.text ?? '')).join('');
        },
      };
    },
  };
}

async function deployPeer(name: 'DBOS' | 'LangGraph'): Promise<Deployment> {
  const database = await freshDatabase(name.toLowerCase());
  const file = new URL(name === 'DBOS' ? './dbos-server.ts' : './langgraph-server.ts', import.meta.url).pathname;
  return {
    database,
    start: async (chatBaseUrl, clients) => {
      const served = await startServer(name, [file], new URL('.', import.meta.url).pathname, { DATABASE_URL: database.url, CHAT_BASE_URL: chatBaseUrl });
      const post = jsonPoster(served.base, {}, clients);
      return {
        pid: served.pid,
        stop: served.stop,
        respond: async (input) => ((await post('/respond', { input })) as { output_text: string }).output_text,
      };
    },
  };
}

export const deploy = (name: SystemName): Promise<Deployment> => (name === 'Palai' ? deployPalai() : deployPeer(name));
