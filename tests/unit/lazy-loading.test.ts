// What a process does not load until it is used: the /mcp and /a2a routers (and
// their SDKs) until the first request to their path, the MCP client pool until
// its first use, the A2A push consumer until its first delivery, undici until
// the first outbound call, the YAML parser until a YAML stdio-servers file is
// read. Each loads once, answers as before, and a failed load is tried again.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { lazyPushConsumer } from '../../adapters/a2a/lazy-push-consumer.js';
import { PUSH_CONSUMER } from '../../adapters/a2a/push-configs.js';
import { lazyMount } from '../../core/api/surface.js';
import { lazyOnce } from '../../core/lazy.js';
import { lazyModel } from '../../adapters/models/lazy-model.js';
import type { ModelEvent, ModelRequest } from '../../core/models/model-port.js';
import { handleError } from '../../adapters/http/problem.js';
import { lazyMcpClientPool } from '../../adapters/mcp/client/lazy-pool.js';
import type { McpClientPool } from '../../adapters/mcp/client/client-pool.js';
import { stdioServersOf } from '../../core/surfaces/mcp/create-mcp-api.js';
import { loadConfig } from '../../core/config.js';
import { createEgressFetch } from '../../core/egress/guarded-fetch.js';
import { createLogger } from '../../core/logger.js';
import type { McpServerTarget, McpToolDescription } from '../../core/surfaces/mcp/mcp-servers-port.js';
import type { OutboxDelivery } from '../../core/outbox/outbox-port.js';
import { cleanUpProcesses, tempDir } from '../support/cli.js';

const ROOT = new URL('../../', import.meta.url).pathname;

after(cleanUpProcesses);

function appWith(handler: RequestHandler) {
  const app = express();
  app.use('/surface', handler);
  app.use((_req, res) => void res.status(404).send('rest fallback'));
  app.use(handleError(createLogger('silent')));
  return app;
}

/** A router that says which path it saw (the mount point stripped, as for any mounted router). */
function echoRouter(label: string): RequestHandler {
  const router = express.Router();
  router.get('/', (req, res) => void res.json({ label, url: req.url, base: req.baseUrl }));
  router.get('/deep/:id', (req, res) => void res.json({ label, id: req.params.id }));
  return router;
}

test('a lazy router loads at the first request to its path, once for concurrent first requests, and serves as the router itself', async () => {
  let loads = 0;
  const app = appWith(
    lazyMount(async () => {
      loads += 1;
      await sleep(50);
      return echoRouter('real');
    }),
  );
  await request(app).get('/elsewhere').expect(404, 'rest fallback');
  assert.equal(loads, 0, 'a request to another path loads nothing');
  const [first, second] = await Promise.all([request(app).get('/surface').expect(200), request(app).get('/surface/deep/42').expect(200)]);
  assert.equal(loads, 1, 'concurrent first requests share one load');
  assert.deepEqual(first.body, { label: 'real', url: '/', base: '/surface' });
  assert.deepEqual(second.body, { label: 'real', id: '42' });
  await request(app).get('/surface/deep/7').expect(200, { label: 'real', id: '7' });
  assert.equal(loads, 1);
  // What the loaded router passes on goes on to the app's next routes, as before.
  await request(app).get('/surface/unknown').expect(404, 'rest fallback');
});

test('a lazy router whose load fails answers a 500 problem, and loads again at the next request', async () => {
  let loads = 0;
  const app = appWith(
    lazyMount(async () => {
      loads += 1;
      if (loads === 1) throw new Error('Cannot find module @modelcontextprotocol/sdk (secret detail)');
      return echoRouter('second try');
    }),
  );
  const failed = await request(app).get('/surface').expect(500);
  assert.match(failed.headers['content-type'], /^application\/problem\+json/);
  assert.equal(failed.body.status, 500);
  assert.match(failed.body.type, /internal/);
  assert.equal(failed.body.instance, '/surface');
  assert.ok(!JSON.stringify(failed.body).includes('secret detail'), 'the error itself is not shown to the client');
  await request(app).get('/surface').expect(200, { label: 'second try', url: '/', base: '/surface' });
  assert.equal(loads, 2);
});

const target: McpServerTarget = { transport: 'streamable_http', id: 'mcps_1', projectId: 'proj_1', name: 'files', url: 'http://127.0.0.1:1/mcp', headers: {} };
const tools: McpToolDescription[] = [{ name: 'read', inputSchema: { type: 'object' } }];

function fakePool() {
  const listeners: Array<(t: McpServerTarget, tools: McpToolDescription[]) => void> = [];
  let closed = 0;
  const pool = {
    onToolsChanged: (listener: (t: McpServerTarget, tools: McpToolDescription[]) => void) => void listeners.push(listener),
    listTools: async () => tools,
    callTool: async () => ({ content: [{ type: 'text', text: 'ok' }] }),
    close: async () => void (closed += 1),
  };
  return { pool: pool as unknown as McpClientPool, listeners, closed: () => closed };
}

test('the MCP client pool is made at its first use; listeners given before then are handed to it; closing an unused one loads nothing', async () => {
  const fake = fakePool();
  let loads = 0;
  const lazy = lazyMcpClientPool(async () => {
    loads += 1;
    if (loads === 1) throw new Error('load failed');
    return fake.pool;
  });
  const heard: string[] = [];
  lazy.onToolsChanged((t) => heard.push(`early ${t.name}`));
  assert.equal(loads, 0);
  await assert.rejects(lazy.listTools(target), /load failed/);
  assert.deepEqual(await lazy.listTools(target), tools, 'a failed load is tried again');
  assert.equal(loads, 2);
  lazy.onToolsChanged((t) => heard.push(`late ${t.name}`));
  assert.equal(fake.listeners.length, 2, 'each listener is registered once');
  for (const listener of fake.listeners) listener(target, tools);
  assert.deepEqual(heard, ['early files', 'late files']);
  await lazy.callTool(target, 'read', {}, { meta: {}, signal: new AbortController().signal, idleTimeoutMs: 1000 });
  assert.equal(loads, 2);
  await lazy.close();
  assert.equal(fake.closed(), 1);

  let unusedLoads = 0;
  const unused = lazyMcpClientPool(async () => {
    unusedLoads += 1;
    return fakePool().pool;
  });
  unused.onToolsChanged(() => undefined);
  await unused.close();
  assert.equal(unusedLoads, 0);
});

test('the A2A push consumer is named at once and loaded at its first delivery, once', async () => {
  let loads = 0;
  const consumer = lazyPushConsumer(async () => {
    loads += 1;
    if (loads === 1) throw new Error('load failed');
    return { name: PUSH_CONSUMER, deliver: async () => ({ kind: 'delivered' }) };
  });
  assert.equal(consumer.name, 'a2a_push');
  assert.equal(consumer.perTargetConcurrency, undefined);
  assert.equal(loads, 0);
  const delivery = { id: 'd1' } as OutboxDelivery;
  await assert.rejects(consumer.deliver(delivery, new AbortController().signal), /load failed/);
  assert.deepEqual(await consumer.deliver(delivery, new AbortController().signal), { kind: 'delivered' });
  await consumer.deliver(delivery, new AbortController().signal);
  assert.equal(loads, 2);
});

test('lazyOnce: one load for concurrent first callers, a failed load forgotten, ifLoaded never loads', async () => {
  let loads = 0;
  const value = lazyOnce(async () => {
    loads += 1;
    await sleep(10);
    if (loads === 1) throw new Error('load failed');
    return { n: loads };
  });
  assert.equal(await value.ifLoaded(), null, 'nothing loaded yet');
  assert.equal(loads, 0);
  const first = await Promise.allSettled([value(), value()]);
  assert.deepEqual(
    first.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  assert.equal(loads, 1, 'concurrent callers share the one load');
  assert.equal(await value.ifLoaded(), null, 'a failed load holds nothing');
  assert.deepEqual(await value(), { n: 2 }, 'the next call loads again');
  assert.equal(await value(), await value(), 'then the same value, without loading');
  assert.deepEqual(await value.ifLoaded(), { n: 2 });
  assert.equal(loads, 2);
});

test('a model adapter whose load failed loads again at the next call (it did not cache the failure)', async () => {
  let loads = 0;
  const model = lazyModel('openai', async () => {
    loads += 1;
    if (loads === 1) throw new Error('Cannot find module openai');
    return {
      provider: 'openai',
      stream: async function* () {
        yield { type: 'finish', reason: 'stop' } as ModelEvent;
      },
    };
  });
  const drain = async () => {
    const events: ModelEvent[] = [];
    for await (const event of model.stream({} as ModelRequest)) events.push(event);
    return events;
  };
  await assert.rejects(drain(), /Cannot find module openai/);
  assert.deepEqual(await drain(), [{ type: 'finish', reason: 'stop' }]);
  assert.equal(loads, 2);
});

test('the guarded fetch: a wrong allow-list entry still throws at once; closing before any call, a later call fails as on a closed pool', async () => {
  assert.throws(() => createEgressFetch({ allowHosts: ['10.0.0.0/99'] }), /not a CIDR block/);
  const unused = createEgressFetch({ allowHosts: ['127.0.0.1'] });
  await unused.close();
  await assert.rejects(unused('http://127.0.0.1:59999/'), (error: Error) => (error.cause as Error | undefined)?.name === 'ClientDestroyedError');
  const denying = createEgressFetch({ allowHosts: [] });
  await assert.rejects(denying('http://127.0.0.1:59999/'), (error: Error & { slug?: string }) => error.slug === 'egress-denied');
  await assert.rejects(denying('ftp://example.com/'), (error: Error & { slug?: string }) => error.slug === 'egress-denied');
  await denying.close();
});

test('a YAML stdio-servers file still loads through the config', () => {
  const dir = tempDir('palai-lazy-yaml-');
  const file = join(dir, 'servers.yaml');
  writeFileSync(file, 'mcpServers:\n  files:\n    command: /usr/bin/files-mcp\n    args: [--root, /srv]\n    env: { ROOT: /srv }\n');
  assert.deepEqual(stdioServersOf(loadConfig({ PALAI_MCP_STDIO_SERVERS_FILE: file })), [
    { name: 'files', command: '/usr/bin/files-mcp', args: ['--root', '/srv'], env: { ROOT: '/srv' }, cwd: null, projects: null },
  ]);
});

/** The packages the compiled modules reach through static imports from `from` (what a process loads before it does anything). */
function staticPackages(...from: string[]): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(/^\s*(?:import|export)\s*(?:[\w\s{},*$]*?\s*from\s*)?["']([^"']+)["']/gm)) {
      const specifier = m[1];
      if (specifier.startsWith('.')) visit(join(dirname(file), specifier));
      else if (!specifier.startsWith('node:')) packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]);
    }
  };
  for (const file of from) visit(join(ROOT, file));
  return packages;
}

test('palai serve loads none of the SDKs and parsers that wait for first use (in dist/, as the CLI runs it)', () => {
  // serve.js imports the hub when it starts it.
  const loaded = staticPackages('dist/cli/commands/serve.js', 'dist/cli/hub.js');
  assert.ok(loaded.has('commander') && loaded.has('express') && loaded.has('pino'), 'the walk follows the imports');
  for (const deferred of ['@modelcontextprotocol/sdk', '@a2a-js/sdk', 'undici', 'yaml', 'zod'])
    assert.ok(!loaded.has(deferred), `${deferred} is imported at start`);
});
