// Sessions: durable conversations whose ordered items every response in the
// session reads before its own input.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { createAgent, createSession, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';

await describeEachStore('sessions', (ctx) => {
  let agentId = '';

  before(async () => {
    // No script: the fake model echoes the last user message.
    agentId = (await createAgent(ctx, { name: 'chat', model: { provider: 'fake' } })).id;
    await createAgent(ctx, { name: 'other-agent', model: { provider: 'fake' } });
  });

  const newSession = (body: Record<string, unknown> = { agent: 'chat' }) => createSession(ctx, body);

  const listItems = async (sessionId: string, query = '') => {
    const { http, auth } = ctx();
    const res = await http.get(`/v1/sessions/${sessionId}/items${query}`).set(auth);
    assertMatchesSpec(res, 'listSessionItems');
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  test('creating a session for an agent named by name answers 201 with a ses_ id', async () => {
    const session = await newSession({ agent: 'chat', metadata: { user: 'u-1' } });
    assert.match(session.id, /^ses_/);
    assert.equal(session.object, 'session');
    assert.equal(session.agent_id, agentId);
    assert.equal(session.agent, 'chat');
    assert.deepEqual(session.metadata, { user: 'u-1' });
    assert.equal(typeof session.created_at, 'number');
  });

  test('a session can name its agent by id', async () => {
    const session = await newSession({ agent: agentId });
    assert.equal(session.agent_id, agentId);
    assert.equal(session.agent, 'chat');
    assert.deepEqual(session.metadata, {});
  });

  test('getting a session returns what creating it returned', async () => {
    const { http, auth } = ctx();
    const session = await newSession();
    const res = await http.get(`/v1/sessions/${session.id}`).set(auth);
    assertMatchesSpec(res, 'getSession');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, session);
  });

  test('a session for an unknown agent is a 404 agent-not-found problem', async () => {
    const { http, auth } = ctx();
    const res = await http.post('/v1/sessions').set(auth).send({ agent: 'nobody' });
    assertMatchesSpec(res, 'createSession');
    assertProblem(res, 404, 'agent-not-found');
  });

  test('an unknown session id is a 404 not-found problem for get, items and delete', async () => {
    const { http, auth } = ctx();
    const missing = 'ses_00000000000000000000000000';
    const get = await http.get(`/v1/sessions/${missing}`).set(auth);
    assertMatchesSpec(get, 'getSession');
    assertProblem(get, 404, 'not-found');
    const items = await http.get(`/v1/sessions/${missing}/items`).set(auth);
    assertMatchesSpec(items, 'listSessionItems');
    assertProblem(items, 404, 'not-found');
    const del = await http.delete(`/v1/sessions/${missing}`).set(auth);
    assertMatchesSpec(del, 'deleteSession');
    assertProblem(del, 404, 'not-found');
  });

  test('a new session has no items', async () => {
    const session = await newSession();
    assert.deepEqual(await listItems(session.id), { object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  test('after two responses the items are user, assistant, user, assistant in order, and paginate', async () => {
    const session = await newSession();
    const first = await respond(ctx, { model: 'chat', session_id: session.id, input: 'first question' });
    const second = await respond(ctx, { session_id: session.id, input: 'second question' });
    assert.equal(first.session_id, session.id);
    assert.equal(second.session_id, session.id);

    const all = await listItems(session.id);
    assert.deepEqual(
      all.data.map((i: { role: string; content: { text: string }[] }) => [i.role, i.content[0].text]),
      [
        ['user', 'first question'],
        ['assistant', 'first question'],
        ['user', 'second question'],
        ['assistant', 'second question'],
      ],
    );
    assert.equal(all.data[1].id, first.output[0].id, 'the assistant item is the response output item');
    assert.equal(all.data[3].id, second.output[0].id);
    assert.equal(all.has_more, false);
    assert.equal(all.first_id, all.data[0].id);
    assert.equal(all.last_id, all.data[3].id);

    const page1 = await listItems(session.id, '?limit=3');
    assert.deepEqual(page1.data, all.data.slice(0, 3));
    assert.equal(page1.has_more, true);
    const page2 = await listItems(session.id, `?limit=3&after=${page1.last_id}`);
    assert.deepEqual(page2.data, all.data.slice(3));
    assert.equal(page2.has_more, false);
  });

  test('an array input appends every input item to the session, in order', async () => {
    const session = await newSession();
    await respond(ctx, {
      session_id: session.id,
      input: [
        { role: 'developer', content: 'be terse' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'part one' }] },
      ],
    });
    const items = await listItems(session.id);
    assert.deepEqual(
      items.data.map((i: { role: string }) => i.role),
      ['developer', 'user', 'assistant'],
    );
    assert.equal(items.data[2].content[0].text, 'part one');
  });

  test('a response in a session sees the earlier items: its input tokens count the whole history', async () => {
    const session = await newSession();
    const first = await respond(ctx, { session_id: session.id, input: 'alpha beta' });
    assert.equal(first.usage.input_tokens, 2);
    assert.equal(first.output_text, 'alpha beta');
    const second = await respond(ctx, { session_id: session.id, input: 'gamma' });
    // Two words asked, two echoed, one asked now.
    assert.equal(second.usage.input_tokens, 5);
    assert.equal(second.output_text, 'gamma');
    const third = await respond(ctx, { session_id: session.id, input: 'delta' });
    // 2 + 2 + 1 + 1 earlier, 1 now.
    assert.equal(third.usage.input_tokens, 7);
    const alone = await respond(ctx, { model: 'chat', input: 'gamma' });
    assert.equal(alone.usage.input_tokens, 1, 'outside the session there is no history');
  });

  test('sessions do not share history with each other', async () => {
    const a = await newSession();
    const b = await newSession();
    await respond(ctx, { session_id: a.id, input: 'one two three four' });
    const inB = await respond(ctx, { session_id: b.id, input: 'five' });
    assert.equal(inB.usage.input_tokens, 1);
    assert.equal((await listItems(b.id)).data.length, 2);
  });

  test('model may be left out when session_id is given; the session names the agent', async () => {
    const session = await newSession();
    const res = await respond(ctx, { session_id: session.id, input: 'no model field' });
    assert.equal(res.status, 'completed');
    assert.equal(res.model, 'chat');
    assert.equal(res.agent.id, agentId);
  });

  test("model naming the session's own agent, by id or name, is accepted", async () => {
    const session = await newSession();
    assert.equal((await respond(ctx, { model: agentId, session_id: session.id, input: 'by id' })).status, 'completed');
    assert.equal((await respond(ctx, { model: 'chat', session_id: session.id, input: 'by name' })).status, 'completed');
  });

  test("a model other than the session's agent is a 400 with a /model pointer, and nothing is written", async () => {
    const { http, auth } = ctx();
    const session = await newSession();
    const res = await http.post('/v1/responses').set(auth).send({ model: 'other-agent', session_id: session.id, input: 'x' });
    assertMatchesSpec(res, 'createResponse');
    assertProblem(res, 400, 'invalid-request');
    assert.deepEqual(
      res.body.errors.map((e: { pointer: string }) => e.pointer),
      ['/model'],
    );
    assert.deepEqual((await listItems(session.id)).data, []);
  });

  test('a response naming an unknown session is a 404 problem', async () => {
    const { http, auth } = ctx();
    const res = await http.post('/v1/responses').set(auth).send({ session_id: 'ses_00000000000000000000000000', input: 'x' });
    assertMatchesSpec(res, 'createResponse');
    assertProblem(res, 404, 'not-found');
  });

  test('deleting a session answers 200; afterwards get, items and delete are 404', async () => {
    const { http, auth } = ctx();
    const session = await newSession();
    await respond(ctx, { session_id: session.id, input: 'to be forgotten' });
    const del = await http.delete(`/v1/sessions/${session.id}`).set(auth);
    assertMatchesSpec(del, 'deleteSession');
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { id: session.id, object: 'session.deleted', deleted: true });
    assertProblem(await http.get(`/v1/sessions/${session.id}`).set(auth), 404, 'not-found');
    assertProblem(await http.get(`/v1/sessions/${session.id}/items`).set(auth), 404, 'not-found');
    assertProblem(await http.delete(`/v1/sessions/${session.id}`).set(auth), 404, 'not-found');
    const reuse = await http.post('/v1/responses').set(auth).send({ session_id: session.id, input: 'still there?' });
    assertProblem(reuse, 404, 'not-found');
  });

  test('the responses of a deleted session stay readable with their output', async () => {
    const { http, auth } = ctx();
    const session = await newSession();
    const done = await respond(ctx, { session_id: session.id, input: 'keep my answer' });
    const del = await http.delete(`/v1/sessions/${session.id}`).set(auth);
    assert.equal(del.status, 200);
    const res = await http.get(`/v1/responses/${done.id}`).set(auth);
    assertMatchesSpec(res, 'getResponse');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'completed');
    assert.equal(res.body.output_text, 'keep my answer');
    assert.deepEqual(res.body.output, done.output);
  });

  test("another project's key gets 404 for this project's session and cannot delete or use it", async () => {
    const { http, auth } = ctx();
    const session = await newSession();
    const other = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
    assertProblem(await http.get(`/v1/sessions/${session.id}`).set(other), 404, 'not-found');
    assertProblem(await http.get(`/v1/sessions/${session.id}/items`).set(other), 404, 'not-found');
    assertProblem(await http.delete(`/v1/sessions/${session.id}`).set(other), 404, 'not-found');
    assertProblem(await http.post('/v1/responses').set(other).send({ session_id: session.id, input: 'x' }), 404, 'not-found');
    assertProblem(await http.post('/v1/sessions').set(other).send({ agent: 'chat' }), 404, 'agent-not-found');
    const mine = await http.get(`/v1/sessions/${session.id}`).set(auth);
    assert.equal(mine.status, 200);
  });
});
