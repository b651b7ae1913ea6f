// Webhook delivery: deliveries per second from the outbox to one local receiver
// at a per-endpoint concurrency of 1, 16 and 64 (signed, through the egress
// guard, each attempt recorded), and the time from a delivery's commit to its
// arrival at the receiver, p50 and p99, with the dispatcher idle.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookConsumer } from '../adapters/webhooks/consumer.js';
import { startHub } from '../cli/hub.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import { OutboxDispatcher } from '../core/outbox/dispatcher.js';
import type { Db } from '../core/store/db.js';
import { onEachStore } from './stores.js';
import { WEBHOOK_CONSUMER } from '../core/surfaces/webhooks/webhook-port.js';

const DELIVERIES = 400;
const LATENCY_SAMPLES = 100;
const CONCURRENCIES = [1, 16, 64];
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

async function startBenchReceiver() {
  const arrivals = new Map<string, number>();
  let waiter: { count: number; resolve: () => void } | null = null;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.set(String(req.headers['webhook-id']), performance.now());
      res.writeHead(204).end();
      if (waiter && arrivals.size >= waiter.count) waiter.resolve();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    until: (count: number) => (arrivals.size >= count ? Promise.resolve() : new Promise<void>((resolve) => (waiter = { count, resolve }))),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function benchOn(label: string, db: Db): Promise<void> {
  console.log(`\n## Webhook deliveries (${label}, one local receiver answering 204)`);
  for (const concurrency of CONCURRENCIES) {
    const config = {
      ...loadConfig(process.env),
      logLevel: 'silent',
      egressAllowHosts: ['127.0.0.1'],
      secretKey: 'bench-webhook-secret-key',
      webhookConcurrency: concurrency,
    };
    // An api-only hub (no worker, no dispatcher of its own), and a dispatcher sized for the run.
    const hub = await startHub({ config, db, role: 'api', logger: createLogger('silent') });
    const dispatcher = new OutboxDispatcher({ db, logger: createLogger('silent'), concurrency, batchSize: Math.max(10, concurrency), pollIntervalMs: 200 });
    dispatcher.register(createWebhookConsumer({ ...hub.api, ...hub.surfaces.slices.webhooks }));
    const receiver = await startBenchReceiver();
    const project = await createProject(db, `bench-webhooks-${Date.now()}-${concurrency}`);
    const endpoint = await hub.surfaces.slices.webhooks.webhooks.create(project.id, { url: receiver.url, events: ['*'], enabled: true });
    const enqueue = () =>
      hub.api.outbox.enqueue({
        projectId: project.id,
        consumer: WEBHOOK_CONSUMER,
        target: endpoint.id,
        payload: { type: 'webhook.test', timestamp: new Date().toISOString(), data: { endpoint_id: endpoint.id } },
      });

    // Throughput: the backlog is written first, then the dispatcher starts.
    for (let i = 0; i < DELIVERIES; i++) await enqueue();
    const started = performance.now();
    await dispatcher.start();
    await receiver.until(DELIVERIES);
    const seconds = (performance.now() - started) / 1000;

    // Latency: one delivery at a time, from its commit (enqueue resolves after it) to its arrival.
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const committed = performance.now();
      const id = await enqueue();
      await receiver.until(DELIVERIES + i + 1);
      latencies.push(receiver.arrivals.get(id)! - committed);
    }
    console.log(
      `concurrency ${String(concurrency).padStart(2)}: ${(DELIVERIES / seconds).toFixed(0)} deliveries/s (${DELIVERIES} in ${seconds.toFixed(2)} s); ` +
        `commit → receiver p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`,
    );
    await dispatcher.stop();
    await hub.close();
    await receiver.close();
  }
}

export async function benchWebhooks(): Promise<void> {
  await onEachStore((store, db) => benchOn(`${store}`, db));
}
