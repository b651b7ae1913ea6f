// Model connections: a project's named way to reach a provider. The key is stored
// sealed (or read from an environment variable), shown only as "set" and its last
// four, and reaches the provider and nothing else: not responses, not the journal,
// not the store in clear, not the logs. A key read from the server's environment
// goes only to the base URL the operator bound its variable to.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore, type TestHub } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { until } from '../support/until.js';
import { OpenAIWireServer, type RecordedRequest } from '../support/wire/openai-server.js';
import { createLogger } from '../../core/logger.js';
import { resolveModel } from '../../core/models/resolve.js';
import { SecretBox } from '../../core/secrets/secret-box.js';
import { createSecretStore } from '../../core/secrets/secret-store.js';
import type { Queryable } from '../../core/store/db.js';

const SECRET_KEY = 'test-secret-key-for-palai';
/** Recognisable, so a test can prove it never leaks. */
const STORED_KEY = 'sk-test-connections-4b8d2e6f1a9c3e57';
const ENV_KEY = 'sk-test-connections-env-9e1f3a5c7b2d';
const KEY_VARIABLE = 'PALAI_TEST_CONNECTION_KEY';

/** The hub's environment: it takes the operator's keys from it when it starts. */
const HUB_ENV = { env: { [KEY_VARIABLE]: ENV_KEY } };

const bearer = (request: RecordedRequest) => String(request.headers.authorization ?? '').replace(/^Bearer /, '');

/** The provider the suites call; the operator bound KEY_VARIABLE to it. */
const wire = await OpenAIWireServer.start();
after(() => wire.close());
const KEY_BINDINGS = [{ variable: KEY_VARIABLE, baseUrl: wire.baseUrl }];
/** Another server of the same kind, which no server key may reach. */
const elsewhere = await OpenAIWireServer.start();
after(() => elsewhere.close());

/** POST /v1/model_connections, checked against the document. */
async function postConnection(ctx: () => TestHub, body: Record<string, unknown>) {
  const res = await ctx().http.post('/v1/model_connections').set(ctx().auth).send(body);
  assertMatchesSpec(res, 'createModelConnection');
  return res;
}

async function getConnection(ctx: () => TestHub, ref: string) {
  const res = await ctx()
    .http.get(`/v1/model_connections/${encodeURIComponent(ref)}`)
    .set(ctx().auth);
  assertMatchesSpec(res, 'getModelConnection');
  return res;
}

/** A connection and its stored key as a hub with another PALAI_SECRET_KEY would have stored them. */
async function insertSealedConnection(ctx: () => TestHub, name: string, sealed: string): Promise<void> {
  const { db } = ctx().hub.kernel;
  await db.query(`INSERT INTO secrets (id, project_id, purpose, ciphertext, last4) VALUES ($1, $2, 'model-key', $3, $4)`, [
    `sec_${name}`,
    ctx().projectId,
    sealed,
    STORED_KEY.slice(-4),
  ]);
  await db.query(
    `INSERT INTO model_connections (id, project_id, name, provider, base_url, api_key_secret_id, api_key_last4)
     VALUES ($1, $2, $3, 'openai-chat', 'http://127.0.0.1:9/v1', $4, $5)`,
    [`mconn_${name}`, ctx().projectId, name, `sec_${name}`, STORED_KEY.slice(-4)],
  );
}

async function storedSecrets(ctx: () => TestHub): Promise<{ id: string; ciphertext: string }[]> {
  const { rows } = await ctx().hub.kernel.db.query<{ id: string; ciphertext: string }>('SELECT id, ciphertext FROM secrets WHERE project_id = $1', [
    ctx().projectId,
  ]);
  return rows;
}

async function storedRows(ctx: () => TestHub): Promise<Record<string, unknown>[]> {
  const { rows } = await ctx().hub.kernel.db.query<Record<string, unknown>>('SELECT * FROM model_connections WHERE project_id = $1', [ctx().projectId]);
  return rows;
}

await describeEachStore(
  'model connections',
  (ctx) => {
    /** Every line the hub logs while this suite runs. */
    const logs: string[] = [];

    before(() => {
      // Each store's suite starts with a server that has seen nothing.
      wire.reset();
      elsewhere.reset();
      ctx().hub.kernel.logger = createLogger('debug', { write: (line: string) => void logs.push(line) });
    });
    const localConnection = () => ({
      name: 'local',
      provider: 'openai-chat',
      base_url: wire.baseUrl,
      api_key: STORED_KEY,
      default_model: 'scenario-text',
    });

    test('creating a connection answers 201 showing that a key is set and its last four, never the key', async () => {
      const res = await postConnection(ctx, localConnection());
      assert.equal(res.status, 201, res.text);
      assert.match(res.body.id, /^mconn_/);
      assert.deepEqual(
        { ...res.body, id: undefined, created_at: undefined },
        {
          id: undefined,
          object: 'model_connection',
          name: 'local',
          provider: 'openai-chat',
          base_url: wire.baseUrl,
          api_key: { set: true, last4: STORED_KEY.slice(-4) },
          api_key_env: null,
          default_model: 'scenario-text',
          created_at: undefined,
        },
      );
      assert.ok(!res.text.includes(STORED_KEY));
    });

    test('a connection is found by its id and by its name', async () => {
      const byName = await getConnection(ctx, 'local');
      assert.equal(byName.status, 200, byName.text);
      const byId = await getConnection(ctx, byName.body.id);
      assert.equal(byId.status, 200, byId.text);
      assert.deepEqual(byId.body, byName.body);
      assert.ok(!byName.text.includes(STORED_KEY));
    });

    test('the list pages through the connections, oldest first', async () => {
      for (const name of ['page-a', 'page-b']) {
        const res = await postConnection(ctx, { name, provider: 'openai', api_key: STORED_KEY });
        assert.equal(res.status, 201, res.text);
      }
      const list = async (query: string) => {
        const res = await ctx().http.get(`/v1/model_connections${query}`).set(ctx().auth);
        assertMatchesSpec(res, 'listModelConnections');
        assert.equal(res.status, 200, res.text);
        assert.ok(!res.text.includes(STORED_KEY));
        return res.body;
      };
      const first = await list('?limit=2');
      assert.equal(first.data.length, 2);
      assert.equal(first.has_more, true);
      const rest = await list(`?limit=2&after=${first.last_id}`);
      assert.equal(rest.has_more, false);
      const names = [...first.data, ...rest.data].map((c: { name: string }) => c.name);
      assert.deepEqual(names.toSorted(), ['local', 'page-a', 'page-b']);
      const all = await list('');
      assert.deepEqual(
        all.data.map((c: { id: string }) => c.id),
        [...first.data, ...rest.data].map((c: { id: string }) => c.id),
      );
    });

    test('a second connection of the same name is 409 conflict', async () => {
      const res = await postConnection(ctx, { ...localConnection(), api_key: 'sk-test-other-key-1234' });
      assertProblem(res, 409, 'conflict');
      assert.equal((await storedRows(ctx)).filter((row) => row.name === 'local').length, 1);
    });

    test('api_key with api_key_env, unknown fields, an unknown provider and an id-like name are 400, and store nothing', async () => {
      const count = (await storedRows(ctx)).length;
      const both = await postConnection(ctx, { name: 'both', provider: 'openai', api_key: STORED_KEY, api_key_env: KEY_VARIABLE });
      assertProblem(both, 400, 'invalid-request');
      const unknown = await postConnection(ctx, { name: 'extra', provider: 'openai', api_key_env: KEY_VARIABLE, organization: 'org-1' });
      assertProblem(unknown, 400, 'validation-failed');
      const provider = await postConnection(ctx, { name: 'bad-provider', provider: 'gemini', api_key_env: KEY_VARIABLE });
      assertProblem(provider, 400, 'validation-failed');
      // Such a name could never be read back: a reference starting with mconn_ is an id.
      const idLike = await postConnection(ctx, { name: 'mconn_lookalike', provider: 'openai', api_key_env: KEY_VARIABLE });
      assertProblem(idLike, 400, 'validation-failed');
      for (const res of [both, unknown, provider, idLike]) assert.ok(!res.text.includes(STORED_KEY), res.text);
      assert.equal((await storedRows(ctx)).length, count);
    });

    test('the store holds the key sealed, never in clear', async () => {
      const rows = await storedRows(ctx);
      assert.ok(rows.length >= 3);
      assert.ok(!JSON.stringify(rows).includes(STORED_KEY), 'a stored row holds the key in clear');
      const local = rows.find((row) => row.name === 'local')!;
      assert.match(String(local.api_key_secret_id), /^sec_/);
      assert.equal(local.api_key_last4, STORED_KEY.slice(-4));
      const secrets = await storedSecrets(ctx);
      assert.match(secrets.find((secret) => secret.id === local.api_key_secret_id)!.ciphertext, /^v1\./);
      assert.ok(!JSON.stringify(secrets).includes(STORED_KEY), 'a secret is held in clear');
      // One secret per connection with a key: the refused duplicate left none behind.
      assert.deepEqual(
        secrets.map((secret) => secret.id).toSorted(),
        rows
          .map((row) => row.api_key_secret_id)
          .filter(Boolean)
          .toSorted(),
      );
      const { db, secrets: store } = ctx().hub.kernel;
      assert.equal(await store.reveal(db, ctx().projectId, String(local.api_key_secret_id)), STORED_KEY, 'the hub can open what it sealed');
    });

    test('an idempotent create replays its answer, and no table of the store holds the key in clear', async () => {
      const create = () =>
        ctx()
          .http.post('/v1/model_connections')
          .set(ctx().auth)
          .set('Idempotency-Key', 'conn-once')
          .send({ name: 'once', provider: 'anthropic', api_key: STORED_KEY });
      const first = await create();
      assert.equal(first.status, 201, first.text);
      const again = await create();
      assertMatchesSpec(again, 'createModelConnection');
      assert.equal(again.status, 201, again.text);
      assert.deepEqual(again.body, first.body);

      const { db } = ctx().hub.kernel;
      const { rows: tables } = await db.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
      );
      assert.ok(tables.some((t) => t.name === 'model_connections'));
      for (const { name } of tables) {
        const { rows } = await db.query(`SELECT * FROM "${name}"`);
        assert.ok(!JSON.stringify(rows).includes(STORED_KEY), `table ${name} holds the key in clear`);
      }
    });

    test("an agent naming the connection calls the connection's base_url with the stored key", async () => {
      await createAgent(ctx, { name: 'via-local', model: { connection: 'local', name: 'scenario-local-text' } });
      const res = await respond(ctx, { model: 'via-local', input: 'hi' });
      assert.equal(res.status, 'completed', JSON.stringify(res.error));
      assert.equal(res.output_text, 'Hello there');
      const [sent] = wire.requestsFor('scenario-local-text');
      assert.equal(sent.path, '/v1/chat/completions', 'the chat adapter, at the base_url the connection holds');
      assert.equal(bearer(sent), STORED_KEY);
    });

    test("an agent that gives no model name gets the connection's default_model", async () => {
      await createAgent(ctx, { name: 'via-local-default', model: { connection: 'local' } });
      const earlier = wire.requestsFor('scenario-text').length;
      const res = await respond(ctx, { model: 'via-local-default', input: 'What is the capital of France?' });
      assert.equal(res.status, 'completed', JSON.stringify(res.error));
      assert.equal(res.output_text, 'Paris is the capital of France.');
      const sent = wire.requestsFor('scenario-text').slice(earlier);
      assert.equal(sent.length, 1);
      assert.equal(bearer(sent[0]), STORED_KEY);
    });

    test('an agent naming its connection by id reaches it, run at once or taken from the queue', async () => {
      const local = await getConnection(ctx, 'local');
      await createAgent(ctx, { name: 'via-local-id', model: { connection: local.body.id, name: 'scenario-local-text' } });
      const earlier = wire.requestsFor('scenario-local-text').length;
      const sync = await respond(ctx, { model: 'via-local-id', input: 'hi' });
      assert.equal(sync.status, 'completed', JSON.stringify(sync.error));
      const queued = await respond(ctx, { model: 'via-local-id', input: 'hi', background: true });
      const { projectId, hub } = ctx();
      const done = await until('the queued response completes', async () => {
        const row = await hub.api.responses.get(projectId, queued.id);
        return ['completed', 'failed'].includes(row.status) && row;
      });
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      assert.ok(JSON.stringify(done.output).includes('Hello there'));
      const sent = wire.requestsFor('scenario-local-text').slice(earlier);
      assert.equal(sent.length, 2, 'both runs called the connection with that id');
      assert.ok(sent.every((request) => bearer(request) === STORED_KEY));
    });

    test('a connection with api_key_env reads the key from that variable when the model is called', async () => {
      const res = await postConnection(ctx, { name: 'from-env', provider: 'openai-chat', base_url: wire.baseUrl, api_key_env: KEY_VARIABLE });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.body.api_key, { set: false, last4: null });
      assert.equal(res.body.api_key_env, KEY_VARIABLE);
      await createAgent(ctx, { name: 'via-env', model: { connection: 'from-env', name: 'scenario-local-text' } });
      const earlier = wire.requests.length;
      const answer = await respond(ctx, { model: 'via-env', input: 'hi' });
      assert.equal(answer.status, 'completed', JSON.stringify(answer.error));
      const sent = wire.requests.slice(earlier);
      assert.equal(sent.length, 1);
      assert.equal(bearer(sent[0]), ENV_KEY);
    });

    test('api_key_env with a base_url other than the one its variable is bound to is 400 at /base_url, and nothing is stored', async () => {
      const count = (await storedRows(ctx)).length;
      for (const base_url of [elsewhere.baseUrl, `${wire.baseUrl}/other`, wire.baseUrl.replace('http:', 'https:')]) {
        const res = await postConnection(ctx, { name: 'env-elsewhere', provider: 'openai-chat', base_url, api_key_env: KEY_VARIABLE });
        assertProblem(res, 400, 'invalid-request');
        assert.equal(res.body.errors[0].pointer, '/base_url');
        assert.match(res.body.detail, new RegExp(`${KEY_VARIABLE} may be sent only to ${wire.baseUrl}`));
      }
      // The same URL written with a trailing slash is the bound one.
      const same = await postConnection(ctx, { name: 'env-same', provider: 'openai-chat', base_url: `${wire.baseUrl}/`, api_key_env: KEY_VARIABLE });
      assert.equal(same.status, 201, same.text);
      assert.equal((await storedRows(ctx)).length, count + 1);
    });

    test('when the binding no longer matches at run time (or the agent overrides base_url), the run fails saying why and the key is never sent', async () => {
      // A connection made when the operator had bound the variable elsewhere.
      await ctx().hub.kernel.db.query(
        `INSERT INTO model_connections (id, project_id, name, provider, base_url, api_key_env) VALUES ($1, $2, $3, 'openai-chat', $4, $5)`,
        ['mconn_rebound', ctx().projectId, 'rebound', elsewhere.baseUrl, KEY_VARIABLE],
      );
      await createAgent(ctx, { name: 'via-rebound', model: { connection: 'rebound', name: 'scenario-text' } });
      await createAgent(ctx, { name: 'via-env-overridden', model: { connection: 'from-env', name: 'scenario-text', base_url: elsewhere.baseUrl } });
      for (const agent of ['via-rebound', 'via-env-overridden']) {
        const res = await respond(ctx, { model: agent, input: 'hi' });
        assert.equal(res.status, 'failed', agent);
        assert.equal(res.error.code, 'model-provider-error');
        assert.match(
          res.error.message,
          new RegExp(`would send the server's key from ${KEY_VARIABLE} to ${elsewhere.baseUrl}, but the operator bound ${KEY_VARIABLE} to ${wire.baseUrl}`),
        );
        assert.ok(!JSON.stringify(res).includes(ENV_KEY));
      }
      assert.equal(elsewhere.requests.length, 0, 'the other server was never called');
    });

    test('a provider error through a connection keeps the key out of the error and the journal', async () => {
      await createAgent(ctx, { name: 'via-local-401', model: { connection: 'local', name: 'scenario-401' } });
      const res = await respond(ctx, { model: 'via-local-401', input: 'hi' });
      assert.equal(res.status, 'failed');
      assert.equal(res.error.code, 'model-provider-error');
      assert.equal(res.error.provider_status, 401);
      assert.match(res.error.message, /^openai-chat: 401 /);
      // The provider's 401 body repeats the key it was sent.
      assert.equal(bearer(wire.requestsFor('scenario-401')[0]), STORED_KEY);
      assert.ok(!JSON.stringify(res).includes(STORED_KEY), res.error.message);

      // A retried failure logs a warning; it must not carry the key either.
      await createAgent(ctx, { name: 'via-local-500', model: { connection: 'local', name: 'scenario-500-then-text' } });
      const retried = await respond(ctx, { model: 'via-local-500', input: 'hi' });
      assert.equal(retried.status, 'completed', JSON.stringify(retried.error));
    });

    test('no journal event and no log line holds a key', async () => {
      const { rows } = await ctx().hub.kernel.db.query<{ data: unknown }>('SELECT data FROM response_events WHERE project_id = $1', [ctx().projectId]);
      assert.ok(rows.length > 0);
      const journal = JSON.stringify(rows);
      const logText = logs.join('');
      assert.match(logText, /model call failed; retrying/, 'the logs were captured');
      assert.match(logText, /response finished/);
      for (const key of [STORED_KEY, ENV_KEY]) {
        assert.ok(!journal.includes(key), 'a journal event holds a key');
        assert.ok(!logText.includes(key), 'a log line holds a key');
      }
    });

    test('DELETE removes the connection and its stored key: reading or deleting it again is 404', async () => {
      const secretId = (await storedRows(ctx)).find((row) => row.name === 'page-a')!.api_key_secret_id;
      assert.ok(secretId);
      const res = await ctx().http.delete('/v1/model_connections/page-a').set(ctx().auth);
      assertMatchesSpec(res, 'deleteModelConnection');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { id: res.body.id, object: 'model_connection.deleted', deleted: true });
      assert.match(res.body.id, /^mconn_/);
      assertProblem(await getConnection(ctx, 'page-a'), 404, 'not-found');
      assertProblem(await getConnection(ctx, res.body.id), 404, 'not-found');
      const again = await ctx().http.delete(`/v1/model_connections/${res.body.id}`).set(ctx().auth);
      assertMatchesSpec(again, 'deleteModelConnection');
      assertProblem(again, 404, 'not-found');
      assert.ok(!(await storedSecrets(ctx)).some((secret) => secret.id === secretId), 'the key went with its connection');
    });

    test('an agent naming a connection that does not exist is refused at /model/connection; one whose connection is deleted later fails, naming it', async () => {
      const { http, auth } = ctx();
      const nowhere = await http
        .post('/v1/agents')
        .set(auth)
        .send({ name: 'via-nowhere', model: { connection: 'nowhere', name: 'scenario-text' } });
      assertMatchesSpec(nowhere, 'createAgent');
      assertProblem(nowhere, 400, 'invalid-request');
      assert.match(nowhere.body.detail, /connection "nowhere" does not exist/);
      assert.deepEqual(nowhere.body.errors, [{ pointer: '/model/connection', detail: 'names no model connection of this project' }]);
      assertProblem(await http.get('/v1/agents/via-nowhere').set(auth), 404, 'agent-not-found');

      const made = await postConnection(ctx, { name: 'soon-gone', provider: 'openai-chat', base_url: wire.baseUrl, default_model: 'scenario-text' });
      assert.equal(made.status, 201, made.text);
      const agent = await createAgent(ctx, { name: 'via-soon-gone', model: { connection: 'soon-gone' } });
      assert.equal('warnings' in agent, false, 'a keyless connection to a local server needs no warning');
      const moved = await http
        .post('/v1/agents/via-soon-gone')
        .set(auth)
        .send({ model: { connection: 'nowhere' } });
      assertMatchesSpec(moved, 'updateAgent');
      assertProblem(moved, 400, 'invalid-request');
      assert.equal(moved.body.errors[0].pointer, '/model/connection');
      assert.equal((await http.get('/v1/agents/via-soon-gone').set(auth)).body.revision, 1, 'the refused update wrote no revision');

      assert.equal((await http.delete('/v1/model_connections/soon-gone').set(auth)).status, 200);
      const res = await respond(ctx, { model: 'via-soon-gone', input: 'hi' });
      assert.equal(res.status, 'failed');
      assert.equal(res.error.code, 'model-provider-error');
      assert.match(res.error.message, /connection "soon-gone" does not exist/);
      assert.deepEqual(res.output, []);
    });

    test('a connection of another provider than the agent names is refused at /model/provider; a key sealed under another secret is a warning, then the failure', async () => {
      const sentBefore = wire.requests.length;
      const mismatch = await ctx()
        .http.post('/v1/agents')
        .set(ctx().auth)
        .send({ name: 'mismatch', model: { provider: 'anthropic', connection: 'local', name: 'scenario-text' } });
      assertProblem(mismatch, 400, 'invalid-request');
      assert.match(mismatch.body.detail, /names provider anthropic, but connection local is openai-chat/);
      assert.deepEqual(mismatch.body.errors, [{ pointer: '/model/provider', detail: 'is not the provider of connection local (openai-chat)' }]);

      await insertSealedConnection(ctx, 'sealed-elsewhere', new SecretBox('another-secret').seal(STORED_KEY));
      const agent = await createAgent(ctx, { name: 'via-sealed-elsewhere', model: { connection: 'sealed-elsewhere', name: 'scenario-text' } });
      assert.equal(agent.warnings.length, 1);
      assert.equal(agent.warnings[0].pointer, '/model');
      assert.match(agent.warnings[0].detail, /cannot be decrypted with this PALAI_SECRET_KEY/);
      const res = await respond(ctx, { model: 'via-sealed-elsewhere', input: 'hi' });
      assert.equal(res.status, 'failed');
      assert.equal(res.error.code, 'model-provider-error');
      assert.equal(res.error.message, agent.warnings[0].detail, 'the run fails in the words of the warning');
      assert.equal(wire.requests.length, sentBefore, 'neither reached the provider');
      assert.ok(!JSON.stringify([agent, res]).includes(STORED_KEY));
    });
  },
  { secretKey: SECRET_KEY, keyEnvAllowlist: KEY_BINDINGS },
  HUB_ENV,
);

await describeEachStore(
  'model connections without PALAI_SECRET_KEY',
  (ctx) => {
    test('api_key_env may only name a variable the operator allow-listed', async () => {
      for (const variable of ['PALAI_SECRET_KEY', 'PALAI_DATABASE_URL', 'HOME']) {
        const res = await postConnection(ctx, {
          name: `env-${variable.toLowerCase()}`,
          provider: 'openai-chat',
          base_url: wire.baseUrl,
          api_key_env: variable,
        });
        assertProblem(res, 400, 'invalid-request');
        assert.equal(res.body.errors[0].pointer, '/api_key_env');
      }
      assert.deepEqual(await storedRows(ctx), []);
    });

    before(() => wire.reset());

    test('a connection with api_key is 400 invalid-request, and nothing is stored', async () => {
      const res = await postConnection(ctx, { name: 'sealed', provider: 'openai-chat', base_url: wire.baseUrl, api_key: STORED_KEY });
      assertProblem(res, 400, 'invalid-request');
      assert.match(res.body.detail, /PALAI_SECRET_KEY/);
      assert.ok(!res.text.includes(STORED_KEY));
      assert.deepEqual(await storedRows(ctx), []);
      assertProblem(await getConnection(ctx, 'sealed'), 404, 'not-found');
    });

    test('a connection with api_key_env works: the provider gets the variable value', async () => {
      const res = await postConnection(ctx, { name: 'from-env', provider: 'openai-chat', base_url: wire.baseUrl, api_key_env: KEY_VARIABLE });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.body.api_key, { set: false, last4: null });
      await createAgent(ctx, { name: 'via-env', model: { connection: 'from-env', name: 'scenario-local-text' } });
      const answer = await respond(ctx, { model: 'via-env', input: 'hi' });
      assert.equal(answer.status, 'completed', JSON.stringify(answer.error));
      assert.equal(answer.output_text, 'Hello there');
      const [sent] = wire.requestsFor('scenario-local-text');
      assert.equal(bearer(sent), ENV_KEY);
    });

    test('a connection stored with a key while the hub had a secret fails the response, naming PALAI_SECRET_KEY', async () => {
      await insertSealedConnection(ctx, 'sealed-before', new SecretBox(SECRET_KEY).seal(STORED_KEY));
      await createAgent(ctx, { name: 'via-sealed-before', model: { connection: 'sealed-before', name: 'scenario-text' } });
      const res = await respond(ctx, { model: 'via-sealed-before', input: 'hi' });
      assert.equal(res.status, 'failed');
      assert.equal(res.error.code, 'model-provider-error');
      assert.match(res.error.message, /has a stored key, but PALAI_SECRET_KEY is not set/);
    });
  },
  { keyEnvAllowlist: KEY_BINDINGS },
  HUB_ENV,
);

test('a store failure while looking a connection up is not reported as a missing connection', async () => {
  const broken = { query: async () => Promise.reject(new Error('connection terminated unexpectedly')) };
  const secrets = createSecretStore({ box: null, env: {}, policy: { keyEnvAllowlist: [] } });
  await assert.rejects(resolveModel(broken as unknown as Queryable, secrets, 'proj_x', { connection: 'local' }), /connection terminated unexpectedly/);
});
