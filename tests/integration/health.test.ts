// Health, readiness and the served OpenAPI document: public, no key needed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import request from 'supertest';
import { createHttpApp } from '../../adapters/http/app.js';
import type { Kernel } from '../../core/kernel.js';
import { Lifecycle } from '../../core/lifecycle.js';
import { createLogger } from '../../core/logger.js';
import { ModelRegistry } from '../../core/models/model-port.js';
import type { Db, QueryResult } from '../../core/store/db.js';
import { loadMigrations } from '../../core/store/migrate.js';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore, fullApp, testConfig } from '../support/hub.js';
import { restOptions } from '../../adapters/http/surface.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';

const generatedDocument = readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8');

await describeEachStore('health', (ctx) => {
  test('/healthz answers ok without a key', async () => {
    const res = await ctx().http.get('/healthz');
    assertMatchesSpec(res, 'getHealth');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });

  test('/readyz reports the store kind and every migration applied, without a key', async () => {
    const { http, kind } = ctx();
    const res = await http.get('/readyz');
    assertMatchesSpec(res, 'getReadiness');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ready', store: kind, migrations: loadMigrations().length });
  });

  test('/openapi.json serves exactly the generated document, OpenAPI 3.1.0, without a key', async () => {
    const res = await ctx().http.get('/openapi.json');
    assertMatchesSpec(res, 'getOpenApiDocument');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.text, generatedDocument);
    assert.equal(res.body.openapi, '3.1.0');
    assert.deepEqual(res.body, JSON.parse(generatedDocument));
  });

  test('public endpoints ignore a bad key instead of refusing it', async () => {
    const { http } = ctx();
    for (const path of ['/healthz', '/readyz', '/openapi.json']) {
      const res = await http.get(path).set('Authorization', 'Bearer palai_sk_wrong');
      assert.equal(res.status, 200, `${path}: ${res.text}`);
    }
  });

  test('HEAD works on the health endpoints', async () => {
    const res = await ctx().http.head('/healthz');
    assert.equal(res.status, 200);
  });

  test("/metrics names no project's own tools: a client function is counted by its kind", async () => {
    const { http, auth } = ctx();
    const tool = 'acme_private_payroll_lookup';
    const agent = await createAgent(ctx, {
      name: 'metrics-tools',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: tool, arguments: {} }] }] },
      tools: [{ type: 'function', name: tool }],
    });
    const waiting = await respond(ctx, { model: agent.name, input: 'go' });
    assert.equal(waiting.palai_status, 'waiting_for_tool');
    const metrics = await http.get('/metrics').set(auth);
    assert.equal(metrics.status, 200);
    assert.ok(!metrics.text.includes(tool), 'the tool name of a project is not exposed');
    assert.match(metrics.text, /^palai_tool_call_seconds_count\{tool="function"\} [1-9]/m);
  });

  test('a draining process answers /readyz 503 shutting-down but stays healthy', async () => {
    const { http } = ctx();
    const lifecycle = new Lifecycle();
    const app = request(createHttpApp({ ...ctx().hub.api, lifecycle }, restOptions(ctx().hub.surfaces.modules)));
    assert.equal((await app.get('/readyz')).status, 200);
    lifecycle.beginDrain();
    const ready = await app.get('/readyz');
    assertMatchesSpec(ready, 'getReadiness');
    assertProblem(ready, 503, 'shutting-down');
    assert.equal((await app.get('/healthz')).status, 200);
    const refused = await app.get('/v1/agents').set(ctx().auth);
    assertProblem(refused, 503, 'shutting-down');
    assert.equal(refused.headers['connection'], 'close', 'the client is told not to reuse the connection');
    assert.match(String(refused.headers['retry-after']), /^\d+$/);
    assert.equal((await http.get('/readyz')).status, 200, 'the hub itself is not draining');
  });
});

/** A stand-in store answering the migration ledger queries as told. */
function ledgerDb(answer: (sql: string) => QueryResult<any>): Db {
  return {
    kind: 'postgres',
    query: async (sql: string) => answer(sql),
    exec: async () => undefined,
    transaction: async () => {
      throw new Error('not used');
    },
    listen: async () => async () => undefined,
    close: async () => undefined,
  };
}

const appOn = (db: Db) =>
  request(fullApp({ db, config: testConfig(), logger: createLogger('silent'), models: new ModelRegistry(), lifecycle: new Lifecycle() } as unknown as Kernel));

test('/readyz is a 503 not-ready problem when the database cannot be reached', async () => {
  const res = await appOn(
    ledgerDb(() => {
      throw new Error('ECONNREFUSED 10.0.0.7:5432');
    }),
  ).get('/readyz');
  assertMatchesSpec(res, 'getReadiness');
  assertProblem(res, 503, 'not-ready');
  assert.ok(!res.text.includes('10.0.0.7'), 'the driver error stays in the server');
});

test('/readyz is a 503 not-ready problem while migrations are pending', async () => {
  const res = await appOn(ledgerDb((sql) => (sql.includes('to_regclass') ? { rows: [{ exists: true }], rowCount: 1 } : { rows: [], rowCount: 0 }))).get(
    '/readyz',
  );
  assertMatchesSpec(res, 'getReadiness');
  assertProblem(res, 503, 'not-ready');
  assert.match(res.body.detail, /migration/);
});
