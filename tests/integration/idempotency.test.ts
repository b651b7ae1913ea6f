// Idempotency-Key: one piece of work per key and request, whatever the retries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { parseSse } from '../support/sse.js';

await describeEachStore('idempotency', (ctx) => {
  const countResponses = async (agent: string) => {
    const { hub, projectId } = ctx();
    const { rows } = await hub.kernel.db.query<{ n: number }>(
      'SELECT count(*)::integer AS n FROM responses r JOIN agents a ON a.id = r.agent_id WHERE r.project_id = $1 AND a.name = $2',
      [projectId, agent],
    );
    return rows[0].n;
  };
  const post = (path: string, key: string, body: object) => ctx().http.post(path).set(ctx().auth).set('Idempotency-Key', key).send(body);

  test('the same key and body return the original response and run it once', async () => {
    await createAgent(ctx, { name: 'idem-sync', model: { provider: 'fake' } });
    const first = await post('/v1/responses', 'k-sync-1', { model: 'idem-sync', input: 'once only' });
    const second = await post('/v1/responses', 'k-sync-1', { model: 'idem-sync', input: 'once only' });
    assertMatchesSpec(first, 'createResponse');
    assertMatchesSpec(second, 'createResponse');
    assert.equal(second.body.id, first.body.id);
    assert.equal(second.body.status, 'completed');
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(await countResponses('idem-sync'), 1);
  });

  test('20 concurrent duplicates while the first still runs make one response, and all answer with it', async () => {
    await createAgent(ctx, { name: 'idem-slow', model: { provider: 'fake', script: [{ text: 'slow words to wait for', delay_ms: 40 }] } });
    const body = { model: 'idem-slow', input: 'go' };
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('/v1/responses', 'k-concurrent', body)));
    for (const res of answers) assertMatchesSpec(res, 'createResponse');
    assert.deepEqual(new Set(answers.map((r) => r.status)), new Set([200]));
    assert.equal(new Set(answers.map((r) => r.body.id)).size, 1);
    assert.ok(answers.every((r) => r.body.status === 'completed' && r.body.output_text === 'slow words to wait for'));
    assert.equal(await countResponses('idem-slow'), 1);
  });

  test('20 concurrent background duplicates make one response', async () => {
    await createAgent(ctx, { name: 'idem-bg', model: { provider: 'fake' } });
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('/v1/responses', 'k-bg', { model: 'idem-bg', input: 'x', background: true })));
    assert.equal(new Set(answers.map((r) => r.body.id)).size, 1);
    assert.equal(await countResponses('idem-bg'), 1);
  });

  test('a streamed duplicate replays the same response events', async () => {
    await createAgent(ctx, { name: 'idem-stream', model: { provider: 'fake' } });
    const body = { model: 'idem-stream', input: 'stream me', stream: true };
    const first = parseSse((await post('/v1/responses', 'k-stream', body)).text);
    const again = parseSse((await post('/v1/responses', 'k-stream', body)).text);
    assert.deepEqual(
      again.map((f) => f.data),
      first.map((f) => f.data),
    );
    assert.equal(await countResponses('idem-stream'), 1);
  });

  test('the same key with a different body is a 422 idempotency-conflict and creates nothing', async () => {
    await createAgent(ctx, { name: 'idem-conflict', model: { provider: 'fake' } });
    await post('/v1/responses', 'k-conflict', { model: 'idem-conflict', input: 'first' });
    const res = await post('/v1/responses', 'k-conflict', { model: 'idem-conflict', input: 'second' });
    assertProblem(res, 422, 'idempotency-conflict');
    assert.equal(await countResponses('idem-conflict'), 1);
    // The same key on another operation is a different request too.
    assertProblem(await post('/v1/agents', 'k-conflict', { name: 'other', model: { provider: 'fake' } }), 422, 'idempotency-conflict');
  });

  test('agent and session creation replay their original answer', async () => {
    const agent = await post('/v1/agents', 'k-agent', { name: 'idem-agent', model: { provider: 'fake' } });
    const again = await post('/v1/agents', 'k-agent', { name: 'idem-agent', model: { provider: 'fake' } });
    assertMatchesSpec(again, 'createAgent');
    assert.equal(again.status, 201);
    assert.deepEqual(again.body, agent.body);
    const session = await post('/v1/sessions', 'k-session', { agent: 'idem-agent' });
    const sessionAgain = await post('/v1/sessions', 'k-session', { agent: 'idem-agent' });
    assert.equal(sessionAgain.status, 201);
    assert.equal(sessionAgain.body.id, session.body.id);
  });

  test('keys are scoped per project', async () => {
    const otherKey = await ctx().newProjectKey();
    const other = { Authorization: `Bearer ${otherKey}` };
    const mine = await post('/v1/agents', 'k-scoped', { name: 'scoped', model: { provider: 'fake' } });
    const theirs = await ctx()
      .http.post('/v1/agents')
      .set(other)
      .set('Idempotency-Key', 'k-scoped')
      .send({ name: 'scoped', model: { provider: 'fake' } });
    assert.equal(theirs.status, 201, theirs.text);
    assert.notEqual(theirs.body.id, mine.body.id);
  });

  test('a repeated action on a waiting response answers again instead of failing', async () => {
    await createAgent(ctx, {
      name: 'idem-tool',
      tools: [{ type: 'function', name: 'lookup' }],
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'lookup', arguments: {} }] }, { text: 'found' }] },
    });
    const waiting = (await post('/v1/responses', 'k-tool-create', { model: 'idem-tool', input: 'x' })).body;
    assert.equal(waiting.palai_status, 'waiting_for_tool');
    const outputs = { outputs: [{ call_id: waiting.required_action.calls[0].call_id, output: '42' }] };
    const first = await post(`/v1/responses/${waiting.id}/tool_outputs`, 'k-tool-out', outputs);
    const again = await post(`/v1/responses/${waiting.id}/tool_outputs`, 'k-tool-out', outputs);
    assert.equal(first.status, 200, first.text);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.status, 'completed');
    assert.equal(again.body.output.filter((i: { type: string }) => i.type === 'function_call_output').length, 1);
  });

  test('an expired key may be used again for new work', async () => {
    await createAgent(ctx, { name: 'idem-expiry', model: { provider: 'fake' } });
    const first = await post('/v1/responses', 'k-expiry', { model: 'idem-expiry', input: 'a' });
    await ctx().hub.kernel.db.query("UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'k-expiry'");
    const second = await post('/v1/responses', 'k-expiry', { model: 'idem-expiry', input: 'b' });
    assert.notEqual(second.body.id, first.body.id);
    assert.equal(second.body.output_text, 'b');
  });

  test('a conflict names the Idempotency-Key it was refused for', async () => {
    await post('/v1/agents', 'k-named', { name: 'idem-named', model: { provider: 'fake' } });
    const res = await post('/v1/agents', 'k-named', { name: 'idem-named-2', model: { provider: 'fake' } });
    assertProblem(res, 422, 'idempotency-conflict');
    assert.match(res.body.detail, /Idempotency-Key "k-named"/);
  });

  test('an Idempotency-Key is an http key: the same text from another surface is another request', async () => {
    const { hub, projectId } = ctx();
    await hub.kernel.db.query(
      `INSERT INTO idempotency_keys (project_id, source, key, operation, fingerprint, resource_id, expires_at)
       VALUES ($1, 'a2a', 'k-cross', 'sendMessage', 'not-this-request', 'resp_elsewhere', now() + interval '1 hour')`,
      [projectId],
    );
    const res = await post('/v1/agents', 'k-cross', { name: 'idem-cross', model: { provider: 'fake' } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers['idempotent-replayed'], undefined);
    const { rows } = await hub.kernel.db.query<{ source: string }>(
      "SELECT source FROM idempotency_keys WHERE project_id = $1 AND key = 'k-cross' ORDER BY source",
      [projectId],
    );
    assert.deepEqual(
      rows.map((r) => r.source),
      ['a2a', 'http'],
    );
  });

  test('a malformed key is refused with a problem', async () => {
    const res = await post('/v1/agents', 'x'.repeat(256), { name: 'never', model: { provider: 'fake' } });
    assertProblem(res, 400, 'invalid-request');
  });
});
