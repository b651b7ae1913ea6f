// The OpenAPI document is the source: it loads, its references resolve, every
// operation is bound to a handler, and generated/ is what it generates.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { bindOperations } from '../../adapters/http/operations.js';
import { matchesSchema } from '../../adapters/http/validation.js';
import { createKernelApi } from '../../core/api/index.js';
import type { Kernel } from '../../core/kernel.js';
import { Lifecycle } from '../../core/lifecycle.js';
import { createLogger } from '../../core/logger.js';
import { ModelRegistry } from '../../core/models/model-port.js';
import * as bodyValidators from '../../generated/body-validators.js';
import * as queryValidators from '../../generated/query-validators.js';
import { operations } from '../../generated/operations.js';
import { fullApp, testConfig } from '../support/hub.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const document = parseYaml(readFileSync(`${root}openapi/palai.yaml`, 'utf8'));
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** A kernel that is never called: building the app must not touch the store. */
const idleKernel = () =>
  ({
    db: new Proxy({}, { get: () => () => Promise.reject(new Error('the store was used while building the app')) }),
    config: testConfig(),
    logger: createLogger('silent'),
    models: new ModelRegistry(),
    lifecycle: new Lifecycle(),
  }) as unknown as Kernel;

function documentOperations(): { operationId: string; method: string; path: string }[] {
  return Object.entries<Record<string, any>>(document.paths).flatMap(([path, item]) =>
    HTTP_METHODS.filter((m) => item[m]).map((m) => ({ operationId: item[m].operationId, method: m.toUpperCase(), path })),
  );
}

test('the OpenAPI document loads as OpenAPI 3.1.0 with the 2020-12 schema dialect', () => {
  assert.equal(document.openapi, '3.1.0');
  assert.equal(document.jsonSchemaDialect, 'https://json-schema.org/draft/2020-12/schema');
  assert.equal(typeof document.info.title, 'string');
  assert.ok(Object.keys(document.paths).length > 0);
  assert.ok(Object.keys(document.components.schemas).length > 0);
});

test('every operation has a unique operationId', () => {
  const ops = documentOperations();
  for (const op of ops) assert.match(String(op.operationId), /^[a-z][A-Za-z]+$/, `${op.method} ${op.path}`);
  assert.equal(new Set(ops.map((o) => o.operationId)).size, ops.length);
});

test('generated/operations.ts lists exactly the operations of the document', () => {
  const key = (o: { operationId: string; method: string; path: string }) => `${o.operationId} ${o.method} ${o.path}`;
  assert.deepEqual(operations.map(key).sort(), documentOperations().map(key).sort());
});

test('every $ref in the document resolves', () => {
  const unresolved: string[] = [];
  const resolve = (ref: string): unknown =>
    ref
      .replace(/^#\//, '')
      .split('/')
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<any>((node, segment) => (node && typeof node === 'object' ? node[segment] : undefined), document);
  let count = 0;
  const walk = (node: unknown, at: string) => {
    if (Array.isArray(node)) return node.forEach((child, i) => walk(child, `${at}/${i}`));
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref') {
        count++;
        if (typeof value !== 'string' || !value.startsWith('#/') || resolve(value) === undefined) unresolved.push(`${at}: ${String(value)}`);
      } else walk(value, `${at}/${key}`);
    }
  };
  walk(document, '');
  assert.ok(count > 50, `only ${count} references found`);
  assert.deepEqual(unresolved, []);
});

test('every schema an operation names has a generated validator', () => {
  const bodies = Object.keys(bodyValidators);
  const queries = Object.keys(queryValidators);
  for (const op of operations) {
    if (op.bodySchema) assert.ok(bodies.includes(op.bodySchema), `${op.operationId} body ${op.bodySchema}`);
    if (op.querySchema) assert.ok(queries.includes(op.querySchema), `${op.operationId} query ${op.querySchema}`);
    for (const [status, schema] of Object.entries(op.responses)) {
      if (schema) assert.ok(bodies.includes(schema), `${op.operationId} ${status} ${schema}`);
    }
  }
  assert.deepEqual(bodies.sort(), Object.keys(document.components.schemas).sort());
});

test('every authenticated operation answers problems by default; public ones need no key', () => {
  for (const op of operations) {
    if (op.authenticated) assert.equal(op.responses.default, 'Problem', op.operationId);
  }
  assert.deepEqual(
    operations
      .filter((o) => !o.authenticated)
      .map((o) => o.path)
      .sort(),
    ['/healthz', '/metrics', '/openapi.json', '/readyz'],
  );
});

test('the HTTP app binds a handler to every operation without touching the store', () => {
  assert.doesNotThrow(() => fullApp(idleKernel()));
});

test('binding refuses to start when an operation has no handler', () => {
  assert.throws(() => bindOperations(createKernelApi(idleKernel()), {}), /no handler for operation getHealth/);
  const allButOne = Object.fromEntries(operations.filter((o) => o.operationId !== 'deleteSession').map((o) => [o.operationId, () => undefined]));
  assert.throws(() => bindOperations(createKernelApi(idleKernel()), allButOne), /no handler for operation deleteSession/);
  const all = Object.fromEntries(operations.map((o) => [o.operationId, () => undefined]));
  assert.doesNotThrow(() => bindOperations(createKernelApi(idleKernel()), all));
});

test('the generated validators enforce the document, e.g. an agent name', () => {
  assert.ok(matchesSchema('AgentName', 'support-bot.v2').ok);
  assert.ok(!matchesSchema('AgentName', '-leading-dash').ok);
  assert.ok(!matchesSchema('AgentName', 'x'.repeat(65)).ok);
  assert.ok(!matchesSchema('AgentName', 'agt_looks_like_an_id').ok);
  assert.ok(matchesSchema('CreateResponseRequest', { model: 'a', input: 'hi', temperature: 0.5 }).ok);
  assert.ok(!matchesSchema('CreateAgentRequest', { name: 'a', model: { provider: 'fake' }, extra: 1 }).ok);
});

test('generated/ is in sync with openapi/palai.yaml (npm run check:generated)', () => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/generate.ts', '--check'], { cwd: root, encoding: 'utf8' });
  assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /in sync/);
});
