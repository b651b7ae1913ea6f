// Hub CPU per synchronous one-step response on PostgreSQL: `palai serve` as a
// child process (logging at info, as an operator runs it), its own user+system
// CPU read from /proc/<pid>/stat around N sequential POST /v1/responses — the
// load generator and the fake provider run here, so their CPU is not counted —
// for the built-in fake model and for an `openai-chat` model connection to
// bench/chat-wire-server.ts (20 one-word chunks). Sequential, then 16 clients.
// PALAI_BENCH_CPU_PROF=<dir> runs the hub under --cpu-prof and leaves its
// profile there (scripts/cpu-profile-summary.mjs reads it), and PALAI_BENCH_CPU_ONLY=fake or
// openai-chat measures that one alone, PALAI_BENCH_HUB_NODE_OPTIONS are the hub's NODE_OPTIONS.
// Prints; asserts nothing.
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startChatWire } from './chat-wire-server.js';
import { record } from './figures.js';
import { build, call, cpuSeconds, cpuTimes, KEY, scratchDatabase, serve, stop } from './processes.js';

const REQUESTS = Number(process.env.PALAI_BENCH_CPU_REQUESTS ?? 600);
const WARMUP = 200;
const CLIENTS = 16;
const WORDS = 20;
const GOALS: Record<string, number> = { fake: 1.5, 'openai-chat': 2.5 };

/** `count` synchronous responses of `agent` from `clients` keep-alive connections; each must complete. */
async function load(base: string, agent: string, count: number, clients: number): Promise<void> {
  const keepAlive = new Agent({ keepAlive: true, maxSockets: clients });
  const body = JSON.stringify({ model: agent, input: 'one two three' });
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(`${base}/v1/responses`, { method: 'POST', headers, agent: keepAlive }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          (JSON.parse(text) as { status?: string }).status === 'completed' ? resolve() : reject(new Error(`not completed: ${text.slice(0, 300)}`)),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
  let sent = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (sent < count) {
        sent++;
        await post();
      }
    }),
  );
  keepAlive.destroy();
}

/** Hub CPU ms per response for `count` responses from `clients` clients, the hub's idle CPU over the same time taken out. */
async function measure(pid: number, idleMsPerSecond: number, base: string, agent: string, count: number, clients: number) {
  const cpu0 = cpuTimes(pid);
  const t0 = performance.now();
  await load(base, agent, count, clients);
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuTimes(pid);
  const systemMs = (cpu1.system - cpu0.system) * 1000;
  const cpuMs = (cpu1.user - cpu0.user) * 1000 + systemMs - idleMsPerSecond * seconds;
  return { msPerResponse: cpuMs / count, systemShare: systemMs / (cpuMs + idleMsPerSecond * seconds), perSecond: count / seconds };
}

export async function benchCpuPerResponse(): Promise<void> {
  build();
  const scratch = await scratchDatabase('cpu');
  if (!scratch) return;
  const wire = await startChatWire(WORDS);
  const profileDir = process.env.PALAI_BENCH_CPU_PROF;
  const hub = await serve('all', {
    PALAI_DATABASE_URL: scratch.url,
    PALAI_LOG_LEVEL: 'info',
    PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1',
    ...(profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
    // E.g. --perf-basic-prof, for `perf record -p <the pid printed>`.
    ...(process.env.PALAI_BENCH_HUB_NODE_OPTIONS ? { NODE_OPTIONS: process.env.PALAI_BENCH_HUB_NODE_OPTIONS } : {}),
  });
  if (process.env.PALAI_BENCH_HUB_NODE_OPTIONS) console.log(`hub pid ${hub.child.pid}`);
  try {
    const pid = hub.child.pid!;
    await call(hub.base, 'POST', '/v1/model_connections', { name: 'bench-wire', provider: 'openai-chat', base_url: wire.baseUrl, default_model: 'bench' });
    await call(hub.base, 'POST', '/v1/agents', { name: 'bench-fake', model: { provider: 'fake' } });
    await call(hub.base, 'POST', '/v1/agents', { name: 'bench-chat', model: { connection: 'bench-wire' } });
    for (const agent of ['bench-fake', 'bench-chat']) await load(hub.base, agent, WARMUP, 4);
    // What the hub spends doing nothing (its housekeeping loops), per second, so it is not put on the responses.
    await sleep(500);
    const idle0 = cpuSeconds(pid);
    await sleep(3000);
    const idleMsPerSecond = ((cpuSeconds(pid) - idle0) * 1000) / 3;

    console.log(
      `\n## Hub CPU per synchronous one-step response, PostgreSQL (palai serve --role all, log level info; idle ${idleMsPerSecond.toFixed(1)} ms/s taken out)`,
    );
    const only = process.env.PALAI_BENCH_CPU_ONLY;
    for (const [provider, agent] of [
      ['fake', 'bench-fake'],
      ['openai-chat', 'bench-chat'],
    ] as const) {
      if (only && only !== provider) continue;
      const sequential = await measure(pid, idleMsPerSecond, hub.base, agent, REQUESTS, 1);
      const concurrent = await measure(pid, idleMsPerSecond, hub.base, agent, REQUESTS, CLIENTS);
      record({
        name: `hub CPU per sync one-step response, ${provider}${provider === 'openai-chat' ? ` (${WORDS} chunks)` : ''}, sequential`,
        value: sequential.msPerResponse,
        unit: 'ms',
        goal: { value: GOALS[provider], better: 'lower' },
        note: `${REQUESTS} responses, ${sequential.perSecond.toFixed(0)}/s, ${(100 * sequential.systemShare).toFixed(0)}% of it in the kernel; ${concurrent.msPerResponse.toFixed(2)} ms with ${CLIENTS} clients (${concurrent.perSecond.toFixed(0)}/s, ${(100 * concurrent.systemShare).toFixed(0)}% in the kernel)`,
      });
    }
  } finally {
    await stop(hub);
    await wire.close();
    await scratch.drop();
  }
}
