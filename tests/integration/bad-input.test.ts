// Bad input is an answer, not a crash: every rejected request gets an RFC 9457
// problem with a stable type, nothing is half-written, no stack trace leaves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import request from 'supertest';
import { createHttpApp } from '../../adapters/http/app.js';
import { createApiKey, revokeApiKey } from '../../core/auth/api-keys.js';
import type { Kernel } from '../../core/kernel.js';
import { createLogger } from '../../core/logger.js';
import { ModelRegistry } from '../../core/models/model-port.js';
import type { Db } from '../../core/store/db.js';
import { operations } from '../../generated/operations.js';
import { createAgent } from '../support/api.js';
import { describeEachStore, testConfig } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';

const BODY_LIMIT = 1024;

const pointers = (body: { errors?: { pointer: string }[] }): string[] => (body.errors ?? []).map((e) => e.pointer);

await describeEachStore(
  'bad input',
  (ctx) => {
    const fake = { provider: 'fake' };

    /** What a rejected request must leave exactly as it was. */
    const snapshot = async () => {
      const { http, auth, hub, projectId } = ctx();
      const list = await http.get('/v1/agents?limit=100').set(auth);
      assert.equal(list.status, 200, list.text);
      const counts: Record<string, number> = {};
      for (const table of ['agents', 'agent_revisions', 'sessions', 'session_items', 'responses', 'response_events']) {
        const { rows } = await hub.kernel.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE project_id = $1`, [projectId]);
        counts[table] = rows[0].n;
      }
      return { agents: list.body.data, counts };
    };

    /** Runs `reject`, then proves the store and the agent list did not change. */
    const nothingWritten = async (reject: () => Promise<void>) => {
      const before = await snapshot();
      await reject();
      assert.deepEqual(await snapshot(), before, 'a rejected request wrote something');
    };

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

        const nested = await http.post('/v1/agents').set(auth).send({ name: 'extra', model: { provider: 'fake', colour: 'red' } });
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
      const tolerated = await http.post('/v1/responses').set(auth).send({ model: 'strict', input: 'hi', temperature: 1, store: false, user: 'u' });
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

        const provider = await http.post('/v1/agents').set(auth).send({ name: 'typed-2', model: { provider: 'openai-nope' } });
        assertProblem(provider, 400, 'validation-failed');
        assert.deepEqual(pointers(provider.body), ['/model/provider']);

        const required = await http.post('/v1/agents').set(auth).send({});
        assertProblem(required, 400, 'validation-failed');
        assert.deepEqual(pointers(required.body).sort(), ['/model', '/name']);

        const notObject = await http.post('/v1/agents').set(auth).send([{ name: 'typed-3', model: fake }]);
        assertProblem(notObject, 400, 'validation-failed');

        const session = await http.post('/v1/sessions').set(auth).send({ agent: 7 });
        assertProblem(session, 400, 'validation-failed');
        assert.deepEqual(pointers(session.body), ['/agent']);

        const metadata = await http.post('/v1/sessions').set(auth).send({ agent: 'typed', metadata: { n: 1 } });
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
        const schema = await http.post('/v1/agents').set(auth).send({ name: 'unusable', model: fake, output_schema: { type: 'no-such-type' } });
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
        const over = await http.post('/v1/agents').set(auth).set('Content-Type', 'application/json').send(bodyOf(BODY_LIMIT + 1, 'too-big'));
        assertMatchesSpec(over, 'createAgent');
        assertProblem(over, 413, 'payload-too-large');
        const far = await http.post('/v1/responses').set(auth).set('Content-Type', 'application/json').send(JSON.stringify({ model: 'x', input: 'y'.repeat(50_000) }));
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
        ['/v1/responses/resp_x', 'delete', 'GET, HEAD'],
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
      const done = await http.post('/v1/responses').set(auth).send({ model: (await ensureAgent('queried')).name, input: 'x' });
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
  },
  { maxBodyBytes: BODY_LIMIT },
);

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
  const kernel = { db: failing, config: testConfig(), logger: createLogger('silent'), models: new ModelRegistry() } as unknown as Kernel;
  const res = await request(createHttpApp(kernel)).get('/v1/agents').set('Authorization', 'Bearer palai_sk_anything-at-all');
  assertMatchesSpec(res, 'listAgents');
  assertProblem(res, 500, 'internal');
  assert.ok(!res.text.includes(secret), res.text);
});
