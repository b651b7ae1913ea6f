// End-to-end figures of the REST path on the fake model —
// synchronous response latency and throughput, and time to the first streamed
// delta — on the embedded store, and on PostgreSQL when PALAI_BENCH_DATABASE_URL
// (a database it may write to) is set. Prints figures; asserts nothing.
import type { AddressInfo } from 'node:net';
import { startHub } from '../cli/hub.js';
import { createApiKey } from '../core/auth/api-keys.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import type { Db } from '../core/store/db.js';
import { onEachStore } from './stores.js';

const SEQUENTIAL = Number(process.env.PALAI_BENCH_REQUESTS ?? 200);
const CONCURRENCY = 8;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

async function bench(label: string, db: Db): Promise<void> {
  const config = { ...loadConfig({}), logLevel: 'silent', pollIntervalMs: 200 };
  const hub = await startHub({ config, db, logger: createLogger('silent') });
  const server = hub.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const project = await createProject(db, `bench-${Date.now()}`);
  const key = await createApiKey(db, project.id, 'bench');
  const headers = { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' };
  const agent = `bench-${Date.now()}`;
  await fetch(`${base}/v1/agents`, { method: 'POST', headers, body: JSON.stringify({ name: agent, model: { provider: 'fake' } }) });
  const input = 'the quick brown fox jumps over the lazy dog';
  const post = (body: object) => fetch(`${base}/v1/responses`, { method: 'POST', headers, body: JSON.stringify({ model: agent, input, ...body }) });

  const latencies: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const started = performance.now();
    const res = await post({});
    await res.json();
    latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);

  const started = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (done < SEQUENTIAL) {
        done++;
        await (await post({})).json();
      }
    }),
  );
  const throughput = SEQUENTIAL / ((performance.now() - started) / 1000);

  const firstDelta: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now();
    const res = await post({ stream: true });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    let recorded = false;
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      seen += decoder.decode(value, { stream: true });
      if (!recorded && seen.includes('response.output_text.delta')) {
        firstDelta.push(performance.now() - t0);
        recorded = true;
      }
    }
  }
  firstDelta.sort((a, b) => a - b);

  console.log(`\n## ${label}`);
  console.log(
    `sync response (${SEQUENTIAL} sequential, 9 words): p50 ${fmt(percentile(latencies, 50))}, p95 ${fmt(percentile(latencies, 95))}, p99 ${fmt(percentile(latencies, 99))}`,
  );
  console.log(`sync throughput (${CONCURRENCY} concurrent clients): ${throughput.toFixed(1)} responses/s`);
  console.log(`stream: POST → first delta p50 ${fmt(percentile(firstDelta, 50))}, p95 ${fmt(percentile(firstDelta, 95))}`);
  console.log(`rss after run: ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);

  await new Promise((resolve) => server.close(resolve));
  await hub.close();
}

export async function benchRestPath(): Promise<void> {
  await onEachStore((store, db) => bench(`REST path, ${store}`, db));
}
