// Broker overhead: the same local Chat Completions stream consumed (a) directly
// with the OpenAI SDK and (b) through Palai (openai-chat adapter → journal → SSE).
// Reports time from the provider's first byte to the first delta in the
// client's hands, and per-token time, for both, and their ratio.
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { startHub } from '../cli/hub.js';
import { createApiKey } from '../core/auth/api-keys.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import type { Db } from '../core/store/db.js';
import { onEachStore } from './stores.js';
import { startChatWire } from './chat-wire-server.js';

const TOKENS = 200;
const AGENT = 'bench-chat';
const RUNS = 20;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function direct(baseUrl: string, firstByteAt: () => number): Promise<{ first: number; perToken: number }> {
  const client = new OpenAI({ apiKey: 'bench', baseURL: baseUrl, maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: 'bench', messages: [{ role: 'user', content: 'go' }], stream: true });
  let first = 0;
  let last = 0;
  for await (const part of stream) {
    if (!part.choices[0]?.delta?.content) continue;
    last = performance.now();
    if (!first) first = last;
  }
  return { first: first - firstByteAt(), perToken: (last - first) / (TOKENS - 1) };
}

async function throughPalai(base: string, key: string, firstByteAt: () => number): Promise<{ first: number; perToken: number }> {
  const res = await fetch(`${base}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: AGENT, input: 'go', stream: true }),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let first = 0;
  let last = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const frames = buffer.split('\n\n');
    buffer = frames.pop()!;
    for (const frame of frames) {
      if (!frame.includes('event: response.output_text.delta')) continue;
      last = performance.now();
      if (!first) first = last;
    }
  }
  if (!first) throw new Error('no delta came through Palai; is the local provider reachable (PALAI_EGRESS_ALLOW_HOSTS)?');
  return { first: first - firstByteAt(), perToken: (last - first) / (TOKENS - 1) };
}

export async function benchBrokerOverhead(): Promise<void> {
  await onEachStore((store, db) => benchOn(`${store}`, db));
}

async function benchOn(label: string, db: Db): Promise<void> {
  const wire = await startChatWire(TOKENS);
  const hub = await startHub({
    config: { ...loadConfig(process.env), logLevel: 'silent', egressAllowHosts: ['127.0.0.1'] },
    db,
    logger: createLogger('silent'),
  });
  const server = hub.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const project = await createProject(db, `bench-${Date.now()}`);
  const key = (await createApiKey(db, project.id, 'bench')).secret;
  await fetch(`${base}/v1/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: AGENT, model: { provider: 'openai-chat', name: 'bench', base_url: wire.baseUrl } }),
  });

  const directRuns = [];
  const palaiRuns = [];
  for (let i = 0; i < RUNS; i++) {
    directRuns.push(await direct(wire.baseUrl, wire.firstByteAt));
    palaiRuns.push(await throughPalai(base, key, wire.firstByteAt));
  }
  const d = { first: median(directRuns.map((r) => r.first)), perToken: median(directRuns.map((r) => r.perToken)) };
  const p = { first: median(palaiRuns.map((r) => r.first)), perToken: median(palaiRuns.map((r) => r.perToken)) };
  console.log(`\n## Broker overhead (openai-chat, ${TOKENS}-token stream, median of ${RUNS}, ${label})`);
  console.log(
    `provider first byte → first delta: SDK direct ${d.first.toFixed(2)} ms, through Palai SSE ${p.first.toFixed(2)} ms, ratio ${(p.first / d.first).toFixed(1)}×`,
  );
  console.log(
    `per token:                         SDK direct ${(d.perToken * 1000).toFixed(1)} µs, through Palai SSE ${(p.perToken * 1000).toFixed(1)} µs, ratio ${(p.perToken / d.perToken).toFixed(1)}×`,
  );

  await new Promise((resolve) => server.close(resolve));
  await hub.close();
  await wire.close();
}
