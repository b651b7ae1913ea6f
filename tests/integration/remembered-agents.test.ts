// An agent this process has admitted a run of is not read again at the next
// admission: the response's insert checks that the agent is still at the
// remembered revision, that its model connection still exists and that the
// caller's key is live, in its own snapshot, and writes nothing when one is
// not so. Whatever changed meanwhile (by this process or another), the run
// sees it as an admission that read the agent would have.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createApiKey } from '../../core/auth/api-keys.js';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { StatementLog } from '../support/statement-log.js';
import { OpenAIWireServer } from '../support/wire/openai-server.js';

let store: StatementLog;

const wire = await OpenAIWireServer.start();
after(() => wire.close());

const script = (text: string) => ({ provider: 'fake', script: [{ text }] });
const outputText = (body: { output: Array<{ type: string; content?: Array<{ text?: string }> }> }) =>
  body.output.flatMap((item) => (item.type === 'message' ? (item.content ?? []).map((part) => part.text ?? '') : [])).join('');

await describeEachStore(
  'a remembered agent at admission',
  (ctx) => {
    test('the second response of an agent reads no agent and no key: its insert checks both', async () => {
      const { http, hub, projectId } = ctx();
      await createAgent(ctx, { name: 'remember-echo', model: script('hello') });
      const key = await createApiKey(hub.kernel.db, projectId, 'remembering');
      const auth = { Authorization: `Bearer ${key.secret}` };
      assert.equal((await http.post('/v1/responses').set(auth).send({ model: 'remember-echo', input: 'first' })).status, 200);
      let res: Awaited<ReturnType<typeof http.post>> | undefined;
      const statements = await store.during(async () => (res = await http.post('/v1/responses').set(auth).send({ model: 'remember-echo', input: 'again' })));
      assertMatchesSpec(res!, 'createResponse');
      assert.equal(res!.status, 200, res!.text);
      assert.equal(res!.body.status, 'completed');
      assert.equal(outputText(res!.body), 'hello');
      const reads = statements.filter((s) => /^\s*SELECT\b/.test(s.sql) && /\bFROM (agents|api_keys)\b/.test(s.sql));
      assert.deepEqual(
        reads.map((s) => s.sql),
        [],
      );
      const inserts = statements.filter((s) => /\bINSERT INTO responses\b/.test(s.sql));
      assert.equal(inserts.length, 1);
      assert.match(inserts[0].sql, /\bFROM agents a WHERE\b/);
      assert.match(inserts[0].sql, /\bapi_keys\b/);
    });

    test('an agent updated since runs at its new revision', async () => {
      const { auth, http } = ctx();
      const agent = await createAgent(ctx, { name: 'remember-evolving', model: script('from v1') });
      const first = await respond(ctx, { model: 'remember-evolving', input: 'x' });
      assert.equal(outputText(first), 'from v1');
      const updated = await http
        .post(`/v1/agents/${agent.id}`)
        .set(auth)
        .send({ model: script('from v2') });
      assert.equal(updated.status, 200, updated.text);
      // By name (remembered above) and by id, which is remembered apart.
      for (const model of ['remember-evolving', agent.id, agent.id]) {
        const res = await respond(ctx, { model, input: 'x' });
        assert.equal(outputText(res), 'from v2', model);
        assert.equal(res.agent.revision, 2, model);
        assert.equal(res.agent.revision_id, updated.body.revision_id, model);
      }
    });

    test('what the remembered spec refused or admitted is decided by the current one', async () => {
      const { auth, http } = ctx();
      const lookup = { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } };
      await createAgent(ctx, { name: 'remember-tools', model: script('done'), tools: [lookup] });
      const offer = { model: 'remember-tools', input: 'x', tools: [lookup] };
      assertProblem(await http.post('/v1/responses').set(auth).send(offer), 400, 'validation-failed');
      // The agent no longer has its own lookup: the run may offer one.
      assert.equal(
        (
          await http
            .post('/v1/agents/remember-tools')
            .set(auth)
            .send({ model: script('done') })
        ).status,
        200,
      );
      const offered = await http.post('/v1/responses').set(auth).send(offer);
      assert.equal(offered.status, 200, offered.text);
      assert.equal(offered.body.status, 'completed');
      // And back: the spec remembered now admits the offer, the current one refuses it.
      assert.equal(
        (
          await http
            .post('/v1/agents/remember-tools')
            .set(auth)
            .send({ model: script('done'), tools: [lookup] })
        ).status,
        200,
      );
      const refused = await http.post('/v1/responses').set(auth).send(offer);
      assertProblem(refused, 400, 'validation-failed');
      assert.match(refused.body.detail, /lookup/);
    });

    test('a model connection deleted since fails the run, naming it; one made again under its name is used', async () => {
      const { auth, http } = ctx();
      const connection = { name: 'remember-conn', provider: 'openai-chat', base_url: wire.baseUrl, default_model: 'scenario-text' };
      assert.equal((await http.post('/v1/model_connections').set(auth).send(connection)).status, 201);
      await createAgent(ctx, { name: 'remember-via-conn', model: { connection: 'remember-conn' } });
      assert.equal((await respond(ctx, { model: 'remember-via-conn', input: 'hi' })).status, 'completed');
      assert.equal((await http.delete('/v1/model_connections/remember-conn').set(auth)).status, 200);
      const gone = await respond(ctx, { model: 'remember-via-conn', input: 'hi' });
      assert.equal(gone.status, 'failed');
      assert.match(gone.error.message, /connection "remember-conn" does not exist/);
      assert.equal((await http.post('/v1/model_connections').set(auth).send(connection)).status, 201);
      const sent = wire.requests.length;
      assert.equal((await respond(ctx, { model: 'remember-via-conn', input: 'hi' })).status, 'completed');
      assert.equal(wire.requests.length, sent + 1, 'the new connection was called');
    });
  },
  {},
  { store: (db) => (store = new StatementLog(db)) },
);
