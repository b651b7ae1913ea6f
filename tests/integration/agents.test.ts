// Agents: named, versioned specs. Revisions are immutable and a response pins
// the revision it was admitted with.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type request from 'supertest';
import { createAgent } from '../support/api.js';
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
      const res: request.Response = await http.get('/v1/agents').query({ limit: 2, ...(after ? { after } : {}) }).set(other);
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
    assert.deepEqual(unpaged.body.data.map((a: { id: string }) => a.id), created);
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

    const again = await http.post('/v1/agents/evolving').set(auth).send({ ...body, name: 'evolving' });
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
    assert.deepEqual(res.body.errors.map((e: { pointer: string }) => e.pointer), ['/name']);
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
    assert.deepEqual(all.body.data.map((r: { revision: number }) => r.revision), [1, 2, 3]);
    assert.deepEqual(all.body.data.map((r: { spec: { instructions: string } }) => r.spec.instructions), ['r1', 'r2', 'r3']);
    for (const revision of all.body.data) {
      assert.equal(revision.object, 'agent.revision');
      assert.equal(revision.agent_id, agent.id);
      assert.match(revision.id, /^agtrev_/);
      assert.equal(revision.spec.name, undefined, 'the name is not part of a revision spec');
    }
    assert.equal(all.body.data[0].id, agent.revision_id);

    const first = await http.get('/v1/agents/revised/revisions?limit=2').set(auth);
    assertMatchesSpec(first, 'listAgentRevisions');
    assert.deepEqual(first.body.data.map((r: { revision: number }) => r.revision), [1, 2]);
    assert.equal(first.body.has_more, true);
    const second = await http.get(`/v1/agents/revised/revisions?limit=2&after=${first.body.last_id}`).set(auth);
    assertMatchesSpec(second, 'listAgentRevisions');
    assert.deepEqual(second.body.data.map((r: { revision: number }) => r.revision), [3]);
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
    const results = await Promise.all(
      Array.from({ length: 6 }, () => http.post('/v1/agents').set(auth).send({ name: 'racer', model: fake })),
    );
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
    assert.deepEqual(res.body.errors.map((e: { pointer: string }) => e.pointer), ['/name']);
  });

  test('the same name may exist in two projects', async () => {
    const mine = await createAgent(ctx, { name: 'shared-name', model: fake });
    const other = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
    const theirs = await createAgent(ctx, { name: 'shared-name', model: fake }, other);
    assert.notEqual(theirs.id, mine.id);
  });

  test("a response pins the revision it ran; an update does not rewrite old responses", async () => {
    const { http, auth } = ctx();
    const agent = await createAgent(ctx, { name: 'pinned', model: { provider: 'fake', script: [{ text: 'from revision one' }] } });
    const first = await http.post('/v1/responses').set(auth).send({ model: 'pinned', input: 'hi' });
    assertMatchesSpec(first, 'createResponse');
    assert.deepEqual(first.body.agent, { id: agent.id, name: 'pinned', revision: 1, revision_id: agent.revision_id });
    assert.equal(first.body.output_text, 'from revision one');

    const updated = await http.post('/v1/agents/pinned').set(auth).send({ model: { provider: 'fake', script: [{ text: 'from revision two' }] } });
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
