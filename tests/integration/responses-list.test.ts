// GET /v1/responses: the project's responses, newest first, narrowed by agent,
// session, status and creation time, paged with a cursor that never repeats or
// skips one.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { createAgent, createSession, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';

await describeEachStore('listing responses', (ctx) => {
  const list = async (query: string, auth = ctx().auth) => {
    const res = await ctx().http.get(`/v1/responses${query}`).set(auth);
    assertMatchesSpec(res, 'listResponses');
    return res;
  };
  const ids = async (query: string) => {
    const res = await list(query);
    assert.equal(res.status, 200, res.text);
    return (res.body.data as { id: string }[]).map((r) => r.id);
  };

  const made: { id: string; agent: string; session: string | null; status: string }[] = [];
  let sessionId: string;
  let agentBId: string;

  before(async () => {
    await createAgent(ctx, { name: 'lister-a', model: { provider: 'fake' } });
    agentBId = (
      await createAgent(ctx, {
        name: 'lister-b',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'lookup', arguments: {} }] }] },
        tools: [{ type: 'function', name: 'lookup' }],
      })
    ).id;
    sessionId = (await createSession(ctx, { agent: 'lister-a' })).id;
    for (let i = 0; i < 5; i++) {
      const r = await respond(ctx, { model: 'lister-a', input: `a${i}`, ...(i % 2 === 0 ? { session_id: sessionId } : {}) });
      made.push({ id: r.id, agent: 'lister-a', session: r.session_id, status: r.status });
    }
    for (let i = 0; i < 2; i++) {
      const r = await respond(ctx, { model: 'lister-b', input: `b${i}` });
      made.push({ id: r.id, agent: 'lister-b', session: null, status: r.status });
    }
  });

  test('newest first by default, oldest first with order=asc, each response once', async () => {
    const all = made.map((m) => m.id);
    assert.deepEqual(await ids('?limit=100'), [...all].reverse());
    assert.deepEqual(await ids('?limit=100&order=asc'), all);
  });

  test('limit and after page through every response exactly once, in both orders', async () => {
    for (const order of ['asc', 'desc']) {
      const seen: string[] = [];
      let after = '';
      for (let pages = 0; pages < 10; pages++) {
        const res = await list(`?limit=2&order=${order}${after}`);
        seen.push(...res.body.data.map((r: { id: string }) => r.id));
        if (!res.body.has_more) break;
        after = `&after=${res.body.last_id}`;
      }
      const expected = made.map((m) => m.id);
      assert.deepEqual(seen, order === 'asc' ? expected : [...expected].reverse());
    }
  });

  test('agent (by name or id), session_id and status narrow the list', async () => {
    const ofB = made
      .filter((m) => m.agent === 'lister-b')
      .map((m) => m.id)
      .reverse();
    assert.deepEqual(await ids('?agent=lister-b'), ofB);
    assert.deepEqual(await ids(`?agent=${agentBId}`), ofB);
    assert.deepEqual(
      await ids(`?session_id=${sessionId}`),
      made
        .filter((m) => m.session === sessionId)
        .map((m) => m.id)
        .reverse(),
    );
    assert.deepEqual(await ids('?status=waiting_for_tool'), ofB);
    assert.deepEqual(await ids('?agent=lister-a&status=waiting_for_tool'), []);
    const listed = (await list('?status=completed&limit=100')).body.data;
    assert.ok(listed.length >= 5 && listed.every((r: { status: string; object: string }) => r.status === 'completed' && r.object === 'response'));
  });

  test('created_after and created_before bound the creation time, inclusively', async () => {
    const now = Math.floor(Date.now() / 1000);
    assert.deepEqual(await ids(`?created_after=${now + 3600}`), []);
    assert.deepEqual(await ids('?created_before=0'), []);
    assert.equal((await ids(`?created_after=${now - 3600}&created_before=${now + 3600}&limit=100`)).length, made.length);
  });

  test("another project's key sees none of them", async () => {
    const res = await list('', { Authorization: `Bearer ${await ctx().newProjectKey()}` });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, []);
  });

  test('an unknown agent is a 404 naming it; a bad status or time is a 400 naming the parameter', async () => {
    const unknown = await list('?agent=nobody-here');
    assertProblem(unknown, 404, 'agent-not-found');
    assert.match(unknown.body.detail, /nobody-here/);
    const status = await list('?status=sleeping');
    assertProblem(status, 400, 'validation-failed');
    assert.equal(status.body.errors[0].pointer, '/query/status');
    assertProblem(await list('?created_after=yesterday'), 400, 'validation-failed');
    assertProblem(await list('?order=sideways'), 400, 'validation-failed');
  });
});
