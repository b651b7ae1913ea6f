// Bad input is an answer, not a crash: every rejected request gets an RFC 9457
// problem with a stable type, nothing is half-written, no stack trace leaves.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import * as zlib from 'node:zlib';

const hasZstd = 'zstdCompressSync' in zlib;
import request from 'supertest';
import { createApiKey, revokeApiKey } from '../../core/auth/api-keys.js';
import { MAX_JSON_DEPTH } from '../../core/json-guard.js';
import type { Kernel } from '../../core/kernel.js';
import { Lifecycle } from '../../core/lifecycle.js';
import { createLogger } from '../../core/logger.js';
import { ModelRegistry } from '../../core/models/model-port.js';
import type { Db } from '../../core/store/db.js';
import { operations } from '../../generated/operations.js';
import { createAgent } from '../support/api.js';
import { describeEachStore, fullApp, testConfig, type TestHub } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { parseSse } from '../support/sse.js';

const BODY_LIMIT = 1024;

const pointers = (body: { errors?: { pointer: string }[] }): string[] => (body.errors ?? []).map((e) => e.pointer);

/** `nothingWritten(reject)` runs `reject`, then proves the project's rows and its agent list did not change. */
function storeGuard(ctx: () => TestHub) {
  /** What a rejected request must leave exactly as it was. */
  const snapshot = async () => {
    const { http, auth, hub, projectId } = ctx();
    const list = await http.get('/v1/agents?limit=100').set(auth);
    assert.equal(list.status, 200, list.text);
    const counts: Record<string, number> = {};
    for (const table of ['agents', 'agent_revisions', 'sessions', 'session_items', 'responses', 'response_events', 'idempotency_keys', 'model_connections']) {
      const { rows } = await hub.kernel.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE project_id = $1`, [projectId]);
      counts[table] = rows[0].n;
    }
    return { agents: list.body.data, counts };
  };
  return {
    nothingWritten: async (reject: () => Promise<void>) => {
      const before = await snapshot();
      await reject();
      assert.deepEqual(await snapshot(), before, 'a rejected request wrote something');
    },
  };
}

await describeEachStore(
  'bad input',
  (ctx) => {
    const fake = { provider: 'fake' };
    const { nothingWritten } = storeGuard(ctx);

    const ensureAgent = async (name: string, model: Record<string, unknown> = fake) => {
      const { http, auth } = ctx();
      const existing = await http.get(`/v1/agents/${name}`).set(auth);
      if (existing.status === 200) return existing.body;
      return createAgent(ctx, { name, model });
    };

    test('malformed JSON is a 400 malformed-json problem', async () => {
      const { http, auth } = ctx();
      await nothingWritten(async () => {
        for (const [path, text] of [
          ['/v1/agents', '{"name": "half'],
          ['/v1/sessions', '{agent: chat}'],
          ['/v1/responses', '{"model":"x","input":"y",}'],
        ]) {
          const res = await http.post(path).set(auth).set('Content-Type', 'application/json').send(text);
          assertProblem(res, 400, 'malformed-json');
          assert.equal(res.body.instance, path);
        }
      });
    });

    test('a body that is not application/json is a 415 unsupported-media-type problem', async () => {
      const { http, auth } = ctx();
      await nothingWritten(async () => {
        const plain = await http.post('/v1/agents').set(auth).set('Content-Type', 'text/plain').send('{"name":"t","model":{"provider":"fake"}}');
        assertMatchesSpec(plain, 'createAgent');
        assertProblem(plain, 415, 'unsupported-media-type');
        const form = await http.post('/v1/sessions').set(auth).type('form').send({ agent: 'x' });
        assertProblem(form, 415, 'unsupported-media-type');
        const latin1 = await http
          .post('/v1/agents')
          .set(auth)
          .set('Content-Type', 'application/json; charset=latin1')
          .send('{"name":"t","model":{"provider":"fake"}}');
        assertProblem(latin1, 415, 'unsupported-media-type');
      });
    });

    test("unknown fields on Palai's own resources are a 400 naming each field; /v1/responses tolerates OpenAI's", async () => {
      const { http, auth } = ctx();
      await ensureAgent('strict');
      await nothingWritten(async () => {
        const agent = await http.post('/v1/agents').set(auth).send({ name: 'extra', model: fake, bogus: 1 });
        assertMatchesSpec(agent, 'createAgent');
        assertProblem(agent, 400, 'validation-failed');
        assert.deepEqual(pointers(agent.body), ['/bogus']);

        const nested = await http
          .post('/v1/agents')
          .set(auth)
          .send({ name: 'extra', model: { provider: 'fake', colour: 'red' } });
        assertProblem(nested, 400, 'validation-failed');
        assert.deepEqual(pointers(nested.body), ['/model/colour']);

        const update = await http.post('/v1/agents/strict').set(auth).send({ model: fake, bogus: true });
        assertMatchesSpec(update, 'updateAgent');
        assertProblem(update, 400, 'validation-failed');
        assert.deepEqual(pointers(update.body), ['/bogus']);

        const session = await http.post('/v1/sessions').set(auth).send({ agent: 'strict', bogus: 'x' });
        assertMatchesSpec(session, 'createSession');
        assertProblem(session, 400, 'validation-failed');
        assert.deepEqual(pointers(session.body), ['/bogus']);
      });
      const tolerated = await http
        .post('/v1/responses')
        .set(auth)
        .send({ model: 'strict', input: 'hi', temperature: 1, user: 'u', include: [], prompt_cache_key: 'k' });
      assertMatchesSpec(tolerated, 'createResponse');
      assert.equal(tolerated.body.status, 'completed');
    });

    test('wrong types are a 400 with a pointer to each offending value', async () => {
      const { http, auth } = ctx();
      await ensureAgent('typed');
      await nothingWritten(async () => {
        const name = await http.post('/v1/agents').set(auth).send({ name: 123, model: fake });
        assertMatchesSpec(name, 'createAgent');
        assertProblem(name, 400, 'validation-failed');
        assert.deepEqual(pointers(name.body), ['/name']);

        const provider = await http
          .post('/v1/agents')
          .set(auth)
          .send({ name: 'typed-2', model: { provider: 'openai-nope' } });
        assertProblem(provider, 400, 'validation-failed');
        assert.deepEqual(pointers(provider.body), ['/model/provider']);

        const required = await http.post('/v1/agents').set(auth).send({});
        assertProblem(required, 400, 'validation-failed');
        assert.deepEqual(pointers(required.body).sort(), ['/model', '/name']);

        const notObject = await http
          .post('/v1/agents')
          .set(auth)
          .send([{ name: 'typed-3', model: fake }]);
        assertProblem(notObject, 400, 'validation-failed');

        const session = await http.post('/v1/sessions').set(auth).send({ agent: 7 });
        assertProblem(session, 400, 'validation-failed');
        assert.deepEqual(pointers(session.body), ['/agent']);

        const metadata = await http
          .post('/v1/sessions')
          .set(auth)
          .send({ agent: 'typed', metadata: { n: 1 } });
        assertProblem(metadata, 400, 'validation-failed');
        assert.deepEqual(pointers(metadata.body), ['/metadata/n']);

        const input = await http.post('/v1/responses').set(auth).send({ model: 'typed', input: 42 });
        assertMatchesSpec(input, 'createResponse');
        assertProblem(input, 400, 'validation-failed');
        assert.ok(pointers(input.body).includes('/input'), input.text);

        const noModel = await http.post('/v1/responses').set(auth).send({ input: 'who runs this?' });
        assertProblem(noModel, 400, 'validation-failed');
        assert.deepEqual(pointers(noModel.body), ['/model']);
      });
    });

    test('a spec the schema allows but that cannot be used is a 400 naming the field', async () => {
      const { http, auth } = ctx();
      await nothingWritten(async () => {
        const schema = await http
          .post('/v1/agents')
          .set(auth)
          .send({ name: 'unusable', model: fake, output_schema: { type: 'no-such-type' } });
        assertProblem(schema, 400, 'validation-failed');
        assert.deepEqual(pointers(schema.body), ['/output_schema']);
        const tools = [
          { type: 'function', name: 'twice' },
          { type: 'function', name: 'twice' },
        ];
        const dup = await http.post('/v1/agents').set(auth).send({ name: 'unusable', model: fake, tools });
        assertProblem(dup, 400, 'validation-failed');
        assert.deepEqual(pointers(dup.body), ['/tools/1/name']);
      });
    });

    test(`a body over the size limit is a 413; one at the limit (${BODY_LIMIT} bytes here) is accepted`, async () => {
      const { http, auth } = ctx();
      const bodyOf = (size: number, name: string) => {
        const base = JSON.stringify({ name, model: fake, instructions: '' });
        const text = JSON.stringify({ name, model: fake, instructions: 'x'.repeat(size - Buffer.byteLength(base)) });
        assert.equal(Buffer.byteLength(text), size);
        return text;
      };
      await nothingWritten(async () => {
        const over = await http
          .post('/v1/agents')
          .set(auth)
          .set('Content-Type', 'application/json')
          .send(bodyOf(BODY_LIMIT + 1, 'too-big'));
        assertMatchesSpec(over, 'createAgent');
        assertProblem(over, 413, 'payload-too-large');
        const far = await http
          .post('/v1/responses')
          .set(auth)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ model: 'x', input: 'y'.repeat(50_000) }));
        assertProblem(far, 413, 'payload-too-large');
      });
      const at = await http.post('/v1/agents').set(auth).set('Content-Type', 'application/json').send(bodyOf(BODY_LIMIT, 'just-fits'));
      assertMatchesSpec(at, 'createAgent');
      assert.equal(at.status, 201, at.text);
    });

    test('a missing, malformed, unknown or revoked key is a 401 with a WWW-Authenticate challenge', async () => {
      const { http, hub, projectId } = ctx();
      const temporary = await createApiKey(hub.kernel.db, projectId, 'temporary');
      const ok = await http.get('/v1/agents').set({ Authorization: `Bearer ${temporary.secret}` });
      assert.equal(ok.status, 200);
      assert.ok(await revokeApiKey(hub.kernel.db, temporary.id));
      for (const header of [undefined, 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer palai_sk_not-a-real-key', `Bearer ${temporary.secret}`]) {
        const req = http.get('/v1/agents');
        const res = await (header ? req.set('Authorization', header) : req);
        assertMatchesSpec(res, 'listAgents');
        assertProblem(res, 401, 'unauthorized');
        assert.match(String(res.headers['www-authenticate']), /^Bearer /);
      }
    });

    test('every authenticated operation refuses a request without a key, before reading its body', async () => {
      const { http } = ctx();
      await nothingWritten(async () => {
        for (const op of operations.filter((o) => o.authenticated)) {
          const path = op.expressPath.replace(/:[a-z_]+/g, 'anything');
          const res = await http[op.method.toLowerCase() as 'get' | 'post' | 'delete'](path).set('Content-Type', 'text/plain').send('not json');
          assertMatchesSpec(res, op.operationId);
          assertProblem(res, 401, 'unauthorized');
        }
      });
    });

    test('unknown ids are 404 problems', async () => {
      const { http, auth } = ctx();
      for (const path of [
        '/v1/agents/agt_00000000000000000000000000',
        '/v1/agents/agt_00000000000000000000000000/revisions',
        '/v1/sessions/ses_00000000000000000000000000',
        '/v1/sessions/ses_00000000000000000000000000/items',
        '/v1/responses/resp_00000000000000000000000000',
      ]) {
        const res = await http.get(path).set(auth);
        assert.equal(res.status, 404, `${path}: ${res.text}`);
        assert.match(res.body.type, /^urn:palai:problem:(agent-)?not-found$/);
        assertProblem(res, 404, res.body.type.replace('urn:palai:problem:', ''));
      }
      const del = await http.delete('/v1/sessions/ses_00000000000000000000000000').set(auth);
      assertProblem(del, 404, 'not-found');
    });

    test('an unknown agent named as model is a 404 agent-not-found problem, and nothing is written', async () => {
      const { http, auth } = ctx();
      await nothingWritten(async () => {
        const res = await http.post('/v1/responses').set(auth).send({ model: 'no-such-agent', input: 'hello' });
        assertMatchesSpec(res, 'createResponse');
        assertProblem(res, 404, 'agent-not-found');
        const session = await http.post('/v1/sessions').set(auth).send({ agent: 'no-such-agent' });
        assertProblem(session, 404, 'agent-not-found');
      });
    });

    test('a method a resource does not support is a 405 with an Allow header', async () => {
      const { http, auth } = ctx();
      const cases: [string, 'get' | 'delete' | 'put' | 'patch' | 'post', string][] = [
        ['/v1/agents', 'delete', 'GET, HEAD, POST'],
        ['/v1/agents/someone', 'put', 'GET, HEAD, POST'],
        ['/v1/agents/someone/revisions', 'post', 'GET, HEAD'],
        ['/v1/sessions', 'get', 'POST'],
        ['/v1/sessions/ses_x', 'patch', 'GET, HEAD, DELETE'],
        ['/v1/responses/resp_x', 'put', 'GET, HEAD, DELETE'],
        ['/healthz', 'post', 'GET, HEAD'],
      ];
      await nothingWritten(async () => {
        for (const [path, method, allow] of cases) {
          const res = await http[method](path).set(auth);
          assertProblem(res, 405, 'method-not-allowed');
          assert.equal(res.headers.allow, allow, `${method} ${path}`);
        }
      });
    });

    test('an invalid query string is a 400 pointing into /query', async () => {
      const { http, auth } = ctx();
      const done = await http
        .post('/v1/responses')
        .set(auth)
        .send({ model: (await ensureAgent('queried')).name, input: 'x' });
      for (const [path, pointer] of [
        ['/v1/agents?limit=0', '/query/limit'],
        ['/v1/agents?limit=abc', '/query/limit'],
        ['/v1/agents?limit=101', '/query/limit'],
        ['/v1/agents?limit=1.5', '/query/limit'],
        ['/v1/agents/queried/revisions?limit=0', '/query/limit'],
        [`/v1/responses/${done.body.id}?stream=maybe`, '/query/stream'],
        [`/v1/responses/${done.body.id}?stream=true&starting_after=-2`, '/query/starting_after'],
      ]) {
        const res = await http.get(path).set(auth);
        assertProblem(res, 400, 'validation-failed');
        assert.deepEqual(pointers(res.body), [pointer], path);
      }
    });

    test('an unknown route is a 404 problem', async () => {
      const { http, auth } = ctx();
      for (const path of ['/v1/nothing', '/v2/agents', '/', '/v1/agents/a/b/c']) {
        const res = await http.get(path).set(auth);
        assertProblem(res, 404, 'not-found');
      }
    });

    test('a model provider error ends the response failed with the error recorded, not an HTTP 500', async () => {
      const { http, auth } = ctx();
      // Five times: the first call and its four retries.
      await ensureAgent('flaky', { provider: 'fake', script: Array.from({ length: 5 }, () => ({ error: { status: 503, message: 'overloaded' } })) });
      const res = await http.post('/v1/responses').set(auth).send({ model: 'flaky', input: 'x' });
      assertMatchesSpec(res, 'createResponse');
      assert.equal(res.status, 200);
      assert.equal(res.body.status, 'failed');
      assert.equal(res.body.error.code, 'model-provider-error');
      assert.equal(res.body.error.provider_status, 503);
      const read = await http.get(`/v1/responses/${res.body.id}`).set(auth);
      assert.deepEqual(read.body.error, res.body.error);
    });

    test('a query integer written as 1e309 or Infinity is a 400 pointing at it, not a 500', async () => {
      const { http, auth } = ctx();
      const done = await http
        .post('/v1/responses')
        .set(auth)
        .send({ model: (await ensureAgent('counted')).name, input: 'x' });
      for (const [path, pointer] of [
        ['/v1/agents?limit=1e309', '/query/limit'],
        ['/v1/agents?limit=Infinity', '/query/limit'],
        ['/v1/model_connections?limit=-Infinity', '/query/limit'],
        ['/v1/agents/counted/revisions?limit=1e999', '/query/limit'],
        [`/v1/sessions/ses_00000000000000000000000000/items?limit=1e309`, '/query/limit'],
        [`/v1/responses/${done.body.id}/events?starting_after=1e309`, '/query/starting_after'],
      ]) {
        const res = await http.get(path).set(auth);
        assertProblem(res, 400, 'validation-failed');
        assert.deepEqual(pointers(res.body), [pointer], path);
      }
    });

    test('an agent timeout_seconds beyond a PostgreSQL integer is a 400 when the agent is written, so no response of it fails on it', async () => {
      const { http, auth } = ctx();
      await nothingWritten(async () => {
        for (const [body, pointer] of [
          [{ limits: { timeout_seconds: 2 ** 31 } }, '/limits/timeout_seconds'],
          [{ limits: { timeout_seconds: Number.MAX_SAFE_INTEGER } }, '/limits/timeout_seconds'],
          [{ tools: [{ type: 'builtin', name: 'echo' }], approval: { tools: ['echo'], timeout_seconds: 2 ** 31 } }, '/approval/timeout_seconds'],
        ] as const) {
          const res = await http
            .post('/v1/agents')
            .set(auth)
            .send({ name: 'forever', model: fake, ...body });
          assertMatchesSpec(res, 'createAgent');
          assertProblem(res, 400, 'validation-failed');
          assert.deepEqual(pointers(res.body), [pointer]);
        }
      });
      const longest = await http
        .post('/v1/agents')
        .set(auth)
        .send({ name: 'patient', model: fake, limits: { timeout_seconds: 2 ** 31 - 1 } });
      assert.equal(longest.status, 201, longest.text);
    });
  },
  { maxBodyBytes: BODY_LIMIT },
);

// Text the store cannot hold, nesting too deep to walk, bodies that cannot be
// decoded and resume points beyond the journal: refused at the edge, for every
// operation, before any of it reaches ajv, the journal or the store. The default
// body limit here, so a body 5,000 levels deep is not refused for its size.
await describeEachStore('bad input: text, nesting, encodings and resume points', (ctx) => {
  const { nothingWritten } = storeGuard(ctx);
  const fake = { provider: 'fake' };

  before(async () => {
    await createAgent(ctx, { name: 'echo', model: fake });
  });

  /** POSTs `text` as the JSON body, unchanged (escapes and all). */
  const postJson = (path: string, text: string | Buffer, headers: Record<string, string> = {}) =>
    ctx()
      .http.post(path)
      .set(ctx().auth)
      .set({ 'Content-Type': 'application/json', ...headers })
      .serialize((body: unknown) => body as string)
      .send(text as string);

  test('U+0000 or a lone surrogate anywhere in a JSON body, in a value or a member name, is a 400 pointing there; nothing is written', async () => {
    await nothingWritten(async () => {
      for (const [path, body, pointer] of [
        ['/v1/agents', { name: 'nul', model: fake, instructions: 'a\u0000b' }, '/instructions'],
        ['/v1/agents', { name: 'nul', model: fake, metadata: { ['key\u0000']: 'v' } }, '/metadata'],
        ['/v1/agents', { name: 'nul', model: fake, tools: [{ type: 'function', name: 'f', parameters: { ['\u0000']: 1 } }] }, '/tools/0/parameters'],
        ['/v1/agents', { name: 'surrogate', model: fake, instructions: 'half \ud800 a pair' }, '/instructions'],
        ['/v1/agents', { name: 'surrogate', model: fake, metadata: { ['\udc00']: 'v' } }, '/metadata'],
        ['/v1/agents/echo', { model: fake, description: 'x\u0000' }, '/description'],
        ['/v1/sessions', { agent: 'echo', metadata: { k: '\u0000' } }, '/metadata/k'],
        ['/v1/responses', { model: 'echo', input: 'hello\u0000' }, '/input'],
        ['/v1/responses', { model: 'echo', input: [{ role: 'user', content: 'tail \ud83d' }] }, '/input/0/content'],
        ['/v1/responses', { model: 'echo', input: 'hi', user: '\u0000' }, '/user'],
      ] as const) {
        // JSON.stringify writes U+0000 as \u0000 and a lone surrogate as its \uXXXX escape: valid JSON text.
        const res = await postJson(path, JSON.stringify(body));
        assertProblem(res, 400, 'validation-failed');
        assert.deepEqual(pointers(res.body), [pointer], `${path} ${JSON.stringify(body)}`);
      }
    });
  });

  test('U+0000 in a path parameter or a query value, or a malformed percent-escape in the path, is a 400 problem; nothing is written', async () => {
    const { http, auth } = ctx();
    await nothingWritten(async () => {
      for (const [method, path] of [
        ['get', '/v1/agents/%00'],
        ['get', '/v1/agents/echo%00/revisions'],
        ['get', '/v1/sessions/%00/items'],
        ['get', '/v1/responses/resp_%00'],
        ['get', '/v1/responses/resp_%00/events'],
        ['delete', '/v1/model_connections/%00'],
        ['delete', '/v1/sessions/ses_%00'],
        ['get', '/v1/agents/%E0%A4%A'],
        ['get', '/v1/agents/%ED%A0%80'],
        ['get', '/v1/sessions/%'],
      ] as const) {
        const res = await http[method](path).set(auth);
        assertProblem(res, 400, 'invalid-request');
      }
      const update = await http.post('/v1/agents/%00').set(auth).send({ model: fake });
      assertProblem(update, 400, 'invalid-request');
      const cancel = await http.post('/v1/responses/%00/cancel').set(auth);
      assertProblem(cancel, 400, 'invalid-request');
      for (const [path, pointer] of [
        ['/v1/agents?after=%00', '/query/after'],
        ['/v1/agents?limit=5&after=agt_%00', '/query/after'],
        ['/v1/model_connections?after=x%00y', '/query/after'],
      ]) {
        const res = await http.get(path).set(auth);
        assertProblem(res, 400, 'validation-failed');
        assert.deepEqual(pointers(res.body), [pointer], path);
      }
    });
  });

  // zstd is decoded where Node.js has it (22.15 and later), like the other encodings; before, it is refused.
  test('a corrupt gzip, deflate, br (or zstd) body is a 400 and an unknown Content-Encoding a 415; nothing is written; a sound gzip body is read', async () => {
    const spec = JSON.stringify({ name: 'zipped', model: fake });
    await nothingWritten(async () => {
      for (const [encoding, bytes] of [
        ['gzip', Buffer.from('not gzip at all')],
        ['gzip', gzipSync(spec).subarray(0, 15)],
        ['deflate', Buffer.from('not deflate')],
        ['deflate', deflateSync(spec).subarray(0, 10)],
        ['br', Buffer.from('not brotli data')],
        ...(hasZstd ? ([['zstd', Buffer.from('not zstd data')]] as const) : []),
      ] as const) {
        const res = await postJson('/v1/agents', bytes, { 'Content-Encoding': encoding });
        assertMatchesSpec(res, 'createAgent');
        assertProblem(res, 400, 'invalid-request');
      }
      for (const encoding of [...(hasZstd ? [] : ['zstd']), 'compress', 'gzip, gzip']) {
        const res = await postJson('/v1/agents', spec, { 'Content-Encoding': encoding });
        assertProblem(res, 415, 'unsupported-media-type');
        assert.match(res.body.detail, /Content-Encoding/);
      }
    });
    for (const [encoding, compress] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
      ...(hasZstd ? ([['zstd', zlib.zstdCompressSync]] as const) : []),
    ] as const) {
      const res = await postJson('/v1/agents', compress(JSON.stringify({ name: `zipped-${encoding}`, model: fake })), { 'Content-Encoding': encoding });
      assertMatchesSpec(res, 'createAgent');
      assert.equal(res.status, 201, res.text);
    }
  });

  test('starting_after or Last-Event-ID beyond the journal, malformed, or below -1 is a 400 naming it; within it, the stream resumes after it', async () => {
    const { http, auth } = ctx();
    const done = await http.post('/v1/responses').set(auth).send({ model: 'echo', input: 'resume points' });
    assert.equal(done.status, 200, done.text);
    const events = `/v1/responses/${done.body.id}/events`;
    const stream = `/v1/responses/${done.body.id}?stream=true`;
    const all = parseSse((await http.get(events).set(auth)).text);
    const last = Number(all.at(-1)!.id);
    assert.equal(all.at(-1)!.data.type, 'response.completed');

    for (const path of [stream, events]) {
      for (const beyond of [last + 1, last + 1000, 2 ** 31 - 1, 2 ** 31, 1e30]) {
        const res = await http.get(`${path}${path.includes('?') ? '&' : '?'}starting_after=${beyond}`).set(auth);
        assertProblem(res, 400, 'validation-failed');
        assert.deepEqual(pointers(res.body), ['/query/starting_after'], `${path} starting_after=${beyond}`);
      }
      for (const header of [String(last + 1), '2147483648', '99999999999', '-2', 'abc', '1.5', '1e3', ' 7x']) {
        const res = await http.get(path).set(auth).set('Last-Event-ID', header);
        assertProblem(res, 400, 'invalid-request');
        assert.match(res.body.detail, /Last-Event-ID/, `${path} Last-Event-ID: ${header}`);
      }
      const below = await http.get(`${path}${path.includes('?') ? '&' : '?'}starting_after=-2`).set(auth);
      assertProblem(below, 400, 'validation-failed');
    }

    // Within the journal nothing changes: the events after the one named, none after the last.
    const after = (res: { status: number; text: string }) => (assert.equal(res.status, 200, res.text), parseSse(res.text).map((f) => Number(f.id)));
    const ids = all.map((f) => Number(f.id));
    assert.deepEqual(after(await http.get(`${events}?starting_after=2`).set(auth)), ids.slice(3));
    assert.deepEqual(after(await http.get(events).set(auth).set('Last-Event-ID', '4')), ids.slice(5));
    assert.deepEqual(after(await http.get(`${stream}&starting_after=-1`).set(auth)), ids);
    assert.deepEqual(after(await http.get(events).set(auth).set('Last-Event-ID', '-1')), ids);
    assert.deepEqual(after(await http.get(`${stream}&starting_after=${last}`).set(auth)), []);
    assert.deepEqual(after(await http.get(events).set(auth).set('Last-Event-ID', String(last))), []);
  });

  test(`JSON nested deeper than ${MAX_JSON_DEPTH} levels is a 400 stating the maximum — 5,000 levels in tool parameters, metadata or output_schema, 100,000 in a tolerated field — and nothing is written`, async () => {
    const objects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    await nothingWritten(async () => {
      for (const [path, text, pointer] of [
        [
          '/v1/agents',
          `{"name":"deep","model":{"provider":"fake"},"tools":[{"type":"function","name":"f","parameters":${objects(5000)}}]}`,
          '/tools/0/parameters',
        ],
        ['/v1/agents', `{"name":"deep","model":{"provider":"fake"},"metadata":${objects(5000)}}`, '/metadata'],
        ['/v1/agents', `{"name":"deep","model":{"provider":"fake"},"output_schema":${objects(5000)}}`, '/output_schema'],
        ['/v1/agents', `{"name":"deep","model":{"provider":"fake","script":[{"json":${arrays(5000)}}]}}`, '/model/script/0/json'],
        ['/v1/agents/echo', `{"model":{"provider":"fake"},"output_schema":${objects(5000)}}`, '/output_schema'],
        ['/v1/responses', `{"model":"echo","input":"x","tolerated":${arrays(100_000)}}`, '/tolerated'],
      ] as const) {
        const res = await postJson(path, text);
        assertProblem(res, 400, 'validation-failed');
        assert.match(res.body.detail, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
        assert.equal(res.body.errors.length, 1);
        assert.ok(res.body.errors[0].pointer.startsWith(pointer), `${res.body.errors[0].pointer} is not under ${pointer}`);
      }
    });
    // The body itself is level 1: tools, the tool and its parameters take three more.
    const nested = (depth: number) =>
      `{"name":"nested-${depth}","model":{"provider":"fake"},"tools":[{"type":"function","name":"f","parameters":${objects(depth - 3)}}]}`;
    const atLimit = await postJson('/v1/agents', nested(MAX_JSON_DEPTH));
    assert.equal(atLimit.status, 201, atLimit.text);
    assertProblem(await postJson('/v1/agents', nested(MAX_JSON_DEPTH + 1)), 400, 'validation-failed');
  });
});

test('an unexpected failure is a generic 500 problem: no message or stack trace of its own reaches the client', async () => {
  const secret = 'connection to db-internal.example:5432 refused';
  const failing: Db = {
    kind: 'postgres',
    query: async () => {
      throw new Error(secret);
    },
    exec: async () => undefined,
    transaction: async () => {
      throw new Error(secret);
    },
    listen: async () => async () => undefined,
    close: async () => undefined,
  };
  const kernel = {
    db: failing,
    config: testConfig(),
    logger: createLogger('silent'),
    models: new ModelRegistry(),
    lifecycle: new Lifecycle(),
  } as unknown as Kernel;
  const res = await request(fullApp(kernel)).get('/v1/agents').set('Authorization', 'Bearer palai_sk_anything-at-all');
  assertMatchesSpec(res, 'listAgents');
  assertProblem(res, 500, 'internal');
  assert.ok(!res.text.includes(secret), res.text);
});
