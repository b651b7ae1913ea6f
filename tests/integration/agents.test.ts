// Agents: named, versioned specs. Revisions are immutable and a response pins
// the revision it was admitted with.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type request from 'supertest';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';

await describeEachStore('agents', (ctx) => {
  const fake = { provider: 'fake' };

  test('creating an agent answers 201 with an agt_ id at revision 1', async () => {
    const agent = await createAgent(ctx, { name: 'creator', model: fake, instructions: 'Be brief.', metadata: { team: 'core' } });
    assert.match(agent.id, /^agt_/);
    assert.equal(agent.object, 'agent');
    assert.equal(agent.name, 'creator');
    assert.equal(agent.revision, 1);
    assert.match(agent.revision_id, /^agtrev_/);
    assert.deepEqual(agent.model, fake);
    assert.equal(agent.instructions, 'Be brief.');
    assert.deepEqual(agent.tools, []);
    assert.deepEqual(agent.metadata, { team: 'core' });
    assert.equal(typeof agent.created_at, 'number');
  });

  test('an agent can be read by its id and by its name, with the same body', async () => {
    const { http, auth } = ctx();
    const agent = await createAgent(ctx, { name: 'readable', model: fake });
    const byId = await http.get(`/v1/agents/${agent.id}`).set(auth);
    assertMatchesSpec(byId, 'getAgent');
    assert.equal(byId.status, 200);
    const byName = await http.get('/v1/agents/readable').set(auth);
    assertMatchesSpec(byName, 'getAgent');
    assert.equal(byName.status, 200);
    assert.deepEqual(byId.body, agent);
    assert.deepEqual(byName.body, agent);
  });

  test('an unknown agent id or name is a 404 agent-not-found problem', async () => {
    const { http, auth } = ctx();
    const byName = await http.get('/v1/agents/nobody-here').set(auth);
    assertMatchesSpec(byName, 'getAgent');
    assertProblem(byName, 404, 'agent-not-found');
    const byId = await http.get('/v1/agents/agt_00000000000000000000000000').set(auth);
    assertProblem(byId, 404, 'agent-not-found');
  });

  test('listing agents pages with limit and after, oldest first, until has_more is false', async () => {
    const { http, auth } = ctx();
    const key = await ctx().newProjectKey();
    const other = { Authorization: `Bearer ${key}` };
    const created = [];
    for (const name of ['page-a', 'page-b', 'page-c', 'page-d', 'page-e']) {
      created.push((await createAgent(ctx, { name, model: fake }, other)).id);
    }
    const seen: string[] = [];
    const pages: boolean[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const res: request.Response = await http
        .get('/v1/agents')
        .query({ limit: 2, ...(after ? { after } : {}) })
        .set(other);
      assertMatchesSpec(res, 'listAgents');
      assert.equal(res.status, 200);
      assert.equal(res.body.object, 'list');
      assert.ok(res.body.data.length <= 2);
      assert.equal(res.body.first_id, res.body.data[0]?.id ?? null);
      assert.equal(res.body.last_id, res.body.data.at(-1)?.id ?? null);
      seen.push(...res.body.data.map((a: { id: string }) => a.id));
      pages.push(res.body.has_more);
      if (!res.body.has_more) break;
      after = res.body.last_id;
    }
    assert.deepEqual(seen, created);
    assert.deepEqual(pages, [true, true, false]);
    const unpaged = await http.get('/v1/agents').set(other);
    assertMatchesSpec(unpaged, 'listAgents');
    assert.deepEqual(
      unpaged.body.data.map((a: { id: string }) => a.id),
      created,
    );
    assert.equal(unpaged.body.has_more, false);
  });

  test('an empty project lists no agents, with null cursors', async () => {
    const { http } = ctx();
    const key = await ctx().newProjectKey();
    const res = await http.get('/v1/agents').set({ Authorization: `Bearer ${key}` });
    assertMatchesSpec(res, 'listAgents');
    assert.deepEqual(res.body, { object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  test('updating an agent writes revision 2; the same body again writes no revision', async () => {
    const { http, auth } = ctx();
    const agent = await createAgent(ctx, { name: 'evolving', model: fake, instructions: 'v1' });
    const body = { model: fake, instructions: 'v2', description: 'second' };
    const updated = await http.post(`/v1/agents/${agent.id}`).set(auth).send(body);
    assertMatchesSpec(updated, 'updateAgent');
    assert.equal(updated.status, 200);
    assert.equal(updated.body.id, agent.id);
    assert.equal(updated.body.revision, 2);
    assert.notEqual(updated.body.revision_id, agent.revision_id);
    assert.equal(updated.body.instructions, 'v2');
    assert.equal(updated.body.description, 'second');

    const again = await http
      .post('/v1/agents/evolving')
      .set(auth)
      .send({ ...body, name: 'evolving' });
    assertMatchesSpec(again, 'updateAgent');
    assert.equal(again.status, 200);
    assert.equal(again.body.revision, 2);
    assert.equal(again.body.revision_id, updated.body.revision_id);

    const current = await http.get('/v1/agents/evolving').set(auth);
    assert.equal(current.body.revision, 2);
    assert.equal(current.body.instructions, 'v2');
  });

  test('an update replaces the whole spec: fields left out are gone', async () => {
    const { http, auth } = ctx();
    await createAgent(ctx, { name: 'replaced', model: fake, instructions: 'keep?', metadata: { a: '1' } });
    const res = await http.post('/v1/agents/replaced').set(auth).send({ model: fake });
    assertMatchesSpec(res, 'updateAgent');
    assert.equal(res.body.revision, 2);
    assert.equal(res.body.instructions, undefined);
    assert.deepEqual(res.body.metadata, {});
  });

  test('renaming an agent through an update is refused with 400 and a /name pointer', async () => {
    const { http, auth } = ctx();
    const agent = await createAgent(ctx, { name: 'fixed-name', model: fake });
    const res = await http.post(`/v1/agents/${agent.id}`).set(auth).send({ name: 'new-name', model: fake, instructions: 'x' });
    assertMatchesSpec(res, 'updateAgent');
    assertProblem(res, 400, 'invalid-request');
    assert.deepEqual(
      res.body.errors.map((e: { pointer: string }) => e.pointer),
      ['/name'],
    );
    const after = await http.get(`/v1/agents/${agent.id}`).set(auth);
    assert.equal(after.body.name, 'fixed-name');
    assert.equal(after.body.revision, 1);
    assert.equal((await http.get('/v1/agents/new-name').set(auth)).status, 404);
  });

  test('updating an unknown agent is a 404 agent-not-found problem', async () => {
    const { http, auth } = ctx();
    const res = await http.post('/v1/agents/ghost').set(auth).send({ model: fake });
    assertMatchesSpec(res, 'updateAgent');
    assertProblem(res, 404, 'agent-not-found');
  });

  test('listAgentRevisions lists every revision oldest first with its spec, paginated', async () => {
    const { http, auth } = ctx();
    const agent = await createAgent(ctx, { name: 'revised', model: fake, instructions: 'r1' });
    for (const instructions of ['r2', 'r3']) {
      const res = await http.post('/v1/agents/revised').set(auth).send({ model: fake, instructions });
      assert.equal(res.status, 200, res.text);
    }
    const all = await http.get(`/v1/agents/${agent.id}/revisions`).set(auth);
    assertMatchesSpec(all, 'listAgentRevisions');
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.body.data.map((r: { revision: number }) => r.revision),
      [1, 2, 3],
    );
    assert.deepEqual(
      all.body.data.map((r: { spec: { instructions: string } }) => r.spec.instructions),
      ['r1', 'r2', 'r3'],
    );
    for (const revision of all.body.data) {
      assert.equal(revision.object, 'agent.revision');
      assert.equal(revision.agent_id, agent.id);
      assert.match(revision.id, /^agtrev_/);
      assert.equal(revision.spec.name, undefined, 'the name is not part of a revision spec');
    }
    assert.equal(all.body.data[0].id, agent.revision_id);

    const first = await http.get('/v1/agents/revised/revisions?limit=2').set(auth);
    assertMatchesSpec(first, 'listAgentRevisions');
    assert.deepEqual(
      first.body.data.map((r: { revision: number }) => r.revision),
      [1, 2],
    );
    assert.equal(first.body.has_more, true);
    const second = await http.get(`/v1/agents/revised/revisions?limit=2&after=${first.body.last_id}`).set(auth);
    assertMatchesSpec(second, 'listAgentRevisions');
    assert.deepEqual(
      second.body.data.map((r: { revision: number }) => r.revision),
      [3],
    );
    assert.equal(second.body.has_more, false);
  });

  test('revisions of an unknown agent are a 404 problem', async () => {
    const { http, auth } = ctx();
    const res = await http.get('/v1/agents/ghost/revisions').set(auth);
    assertMatchesSpec(res, 'listAgentRevisions');
    assertProblem(res, 404, 'agent-not-found');
  });

  test('a second agent with the same name is a 409 conflict and the first is untouched', async () => {
    const { http, auth } = ctx();
    const first = await createAgent(ctx, { name: 'twin', model: fake, instructions: 'original' });
    const res = await http.post('/v1/agents').set(auth).send({ name: 'twin', model: fake, instructions: 'impostor' });
    assertMatchesSpec(res, 'createAgent');
    assertProblem(res, 409, 'conflict');
    const current = await http.get('/v1/agents/twin').set(auth);
    assert.deepEqual(current.body, first);
  });

  test('concurrent creates of one name give exactly one 201 and 409 conflicts, never a 500', async () => {
    const { http, auth } = ctx();
    const results = await Promise.all(Array.from({ length: 6 }, () => http.post('/v1/agents').set(auth).send({ name: 'racer', model: fake })));
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409], results.map((r) => r.text).join('\n'));
    for (const res of results) assertMatchesSpec(res, 'createAgent');
    for (const res of results.filter((r) => r.status === 409)) assertProblem(res, 409, 'conflict');
  });

  test('a name that looks like an agent id is refused, since ids and names share one namespace', async () => {
    const { http, auth } = ctx();
    const res = await http.post('/v1/agents').set(auth).send({ name: 'agt_lookalike', model: fake });
    assertMatchesSpec(res, 'createAgent');
    assertProblem(res, 400, 'validation-failed');
    assert.deepEqual(
      res.body.errors.map((e: { pointer: string }) => e.pointer),
      ['/name'],
    );
  });

  test('the same name may exist in two projects', async () => {
    const mine = await createAgent(ctx, { name: 'shared-name', model: fake });
    const other = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
    const theirs = await createAgent(ctx, { name: 'shared-name', model: fake }, other);
    assert.notEqual(theirs.id, mine.id);
  });

  test('a response pins the revision it ran; an update does not rewrite old responses', async () => {
    const { http, auth } = ctx();
    const agent = await createAgent(ctx, { name: 'pinned', model: { provider: 'fake', script: [{ text: 'from revision one' }] } });
    const first = await http.post('/v1/responses').set(auth).send({ model: 'pinned', input: 'hi' });
    assertMatchesSpec(first, 'createResponse');
    assert.deepEqual(first.body.agent, { id: agent.id, name: 'pinned', revision: 1, revision_id: agent.revision_id });
    assert.equal(first.body.output_text, 'from revision one');

    const updated = await http
      .post('/v1/agents/pinned')
      .set(auth)
      .send({ model: { provider: 'fake', script: [{ text: 'from revision two' }] } });
    assert.equal(updated.body.revision, 2);

    const second = await http.post('/v1/responses').set(auth).send({ model: 'pinned', input: 'hi' });
    assertMatchesSpec(second, 'createResponse');
    assert.equal(second.body.agent.revision, 2);
    assert.equal(second.body.agent.revision_id, updated.body.revision_id);
    assert.equal(second.body.output_text, 'from revision two');

    const old = await http.get(`/v1/responses/${first.body.id}`).set(auth);
    assertMatchesSpec(old, 'getResponse');
    assert.equal(old.body.agent.revision, 1);
    assert.equal(old.body.agent.revision_id, agent.revision_id);
    assert.equal(old.body.output_text, 'from revision one');
  });

  test("another project's key cannot see, update, list or run this project's agent", async () => {
    const { http } = ctx();
    const agent = await createAgent(ctx, { name: 'private', model: fake });
    const other = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
    for (const ref of [agent.id, 'private']) {
      const get = await http.get(`/v1/agents/${ref}`).set(other);
      assertMatchesSpec(get, 'getAgent');
      assertProblem(get, 404, 'agent-not-found');
      const update = await http.post(`/v1/agents/${ref}`).set(other).send({ model: fake, instructions: 'hijack' });
      assertProblem(update, 404, 'agent-not-found');
      const revisions = await http.get(`/v1/agents/${ref}/revisions`).set(other);
      assertProblem(revisions, 404, 'agent-not-found');
    }
    const list = await http.get('/v1/agents').set(other);
    assertMatchesSpec(list, 'listAgents');
    assert.ok(!list.body.data.some((a: { id: string }) => a.id === agent.id));
    const run = await http.post('/v1/responses').set(other).send({ model: agent.id, input: 'x' });
    assertProblem(run, 404, 'agent-not-found');
    const mine = await http.get(`/v1/agents/${agent.id}`).set(ctx().auth);
    assert.equal(mine.body.revision, 1);
  });
});

// A server with no provider key in its environment, at the providers' own APIs.
const UNSET_VARIABLE = 'PALAI_TEST_UNSET_MODEL_KEY';
await describeEachStore(
  'agents and their model keys',
  (ctx) => {
    const postAgent = async (body: Record<string, unknown>) => {
      const res = await ctx().http.post('/v1/agents').set(ctx().auth).send(body);
      assertMatchesSpec(res, 'createAgent');
      return res;
    };
    const postConnection = async (body: Record<string, unknown>) => {
      const res = await ctx().http.post('/v1/model_connections').set(ctx().auth).send(body);
      assert.equal(res.status, 201, res.text);
    };

    test('an agent naming an unknown model connection, or one of another provider, is refused at create and update, naming the field', async () => {
      const { http, auth } = ctx();
      const unknown = await postAgent({ name: 'nowhere-bound', model: { connection: 'no-such-connection' } });
      assertProblem(unknown, 400, 'invalid-request');
      assert.deepEqual(unknown.body.errors, [{ pointer: '/model/connection', detail: 'names no model connection of this project' }]);
      assertProblem(await http.get('/v1/agents/nowhere-bound').set(auth), 404, 'agent-not-found');

      await postConnection({ name: 'claude', provider: 'anthropic', api_key: 'sk-ant-test-stored-0123456789' });
      const other = await postAgent({ name: 'crossed', model: { provider: 'openai', connection: 'claude' } });
      assertProblem(other, 400, 'invalid-request');
      assert.equal(other.body.errors[0].pointer, '/model/provider');

      const agent = await createAgent(ctx, { name: 'rewired', model: { provider: 'fake' } });
      const update = await http
        .post('/v1/agents/rewired')
        .set(auth)
        .send({ model: { connection: 'no-such-connection' } });
      assertMatchesSpec(update, 'updateAgent');
      assertProblem(update, 400, 'invalid-request');
      assert.equal(update.body.errors[0].pointer, '/model/connection');
      assert.deepEqual((await http.get('/v1/agents/rewired').set(auth)).body, agent, 'nothing was written');
    });

    test('a provider with no usable key is a warning on the create and update answers, in the words the run then fails with', async () => {
      const { http, auth } = ctx();
      await postConnection({ name: 'anthropic-keyless', provider: 'anthropic' });
      await postConnection({ name: 'env-keyless', provider: 'openai', api_key_env: UNSET_VARIABLE });
      const cases: [Record<string, unknown>, string][] = [
        [{ provider: 'openai', name: 'gpt-4.1-mini' }, "OPENAI_API_KEY is not set, and the agent's model names no connection with a key."],
        [
          { connection: 'anthropic-keyless', name: 'claude-sonnet-4-5' },
          "ANTHROPIC_API_KEY is not set, and the agent's connection anthropic-keyless has no key.",
        ],
        [{ connection: 'env-keyless', name: 'gpt-4.1-mini' }, `${UNSET_VARIABLE} is not set, and the agent's connection env-keyless reads its key from it.`],
      ];
      for (const [index, [model, detail]] of cases.entries()) {
        const name = `keyless-${index}`;
        const created = await postAgent({ name, model });
        assert.equal(created.status, 201, created.text);
        assert.deepEqual(created.body.warnings, [{ pointer: '/model', detail }], name);
        const read = await http.get(`/v1/agents/${name}`).set(auth);
        assert.equal('warnings' in read.body, false, 'a warning belongs to the answer of a write');
        const run = await respond(ctx, { model: name, input: 'hi' });
        assert.equal(run.status, 'failed', name);
        assert.equal(run.error.code, 'model-provider-error');
        assert.equal(run.error.message, detail, 'the run names the missing key');
      }
      const updated = await http
        .post('/v1/agents/keyless-0')
        .set(auth)
        .send({ model: { provider: 'openai', name: 'gpt-4.1' } });
      assertMatchesSpec(updated, 'updateAgent');
      assert.equal(updated.body.revision, 2);
      assert.deepEqual(updated.body.warnings, [{ pointer: '/model', detail: cases[0][1] }]);
    });

    test('an agent whose model can run has no warnings: a stored key, the fake model, a server of its own that may need no key', async () => {
      for (const [name, model] of [
        ['stored-key', { connection: 'claude', name: 'claude-sonnet-4-5' }],
        ['fake-model', { provider: 'fake' }],
        ['local-server', { provider: 'openai-chat', name: 'llama3.1:8b', base_url: 'http://127.0.0.1:11434/v1' }],
      ] as const) {
        const created = await createAgent(ctx, { name, model });
        assert.equal('warnings' in created, false, `${name}: ${JSON.stringify(created.warnings)}`);
      }
    });
  },
  { secretKey: 'agents-test-secret-key', keyEnvAllowlist: [{ variable: UNSET_VARIABLE, baseUrl: 'https://models.example/v1' }] },
  { env: {} },
);
