// Health, readiness and the served OpenAPI document: public, no key needed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import request from 'supertest';
import { createHttpApp } from '../../adapters/http/app.js';
import type { Kernel } from '../../core/kernel.js';
import { createLogger } from '../../core/logger.js';
import { ModelRegistry } from '../../core/models/model-port.js';
import type { Db, QueryResult } from '../../core/store/db.js';
import { loadMigrations } from '../../core/store/migrate.js';
import { describeEachStore, testConfig } from '../support/hub.js';
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
  request(createHttpApp({ db, config: testConfig(), logger: createLogger('silent'), models: new ModelRegistry() } as unknown as Kernel));

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
  const res = await appOn(
    ledgerDb((sql) => (sql.includes('to_regclass') ? { rows: [{ exists: true }], rowCount: 1 } : { rows: [], rowCount: 0 })),
  ).get('/readyz');
  assertMatchesSpec(res, 'getReadiness');
  assertProblem(res, 503, 'not-ready');
  assert.match(res.body.detail, /migration/);
});
