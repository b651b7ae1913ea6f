import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { matchesSchema } from '../../adapters/http/validation.js';
import { parseSse } from '../support/sse.js';

await describeEachStore('responses', (ctx) => {
  test('a synchronous response echoes the last user message and completes', async () => {
    const { http, auth } = ctx();
    await createAgent(ctx, { name: 'echo', model: { provider: 'fake' } });
    const res = await http.post('/v1/responses').set(auth).send({ model: 'echo', input: 'hello durable world' });
    assertMatchesSpec(res, 'createResponse');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'completed');
    assert.match(res.body.id, /^resp_/);
    assert.equal(res.body.object, 'response');
    assert.equal(res.body.model, 'echo');
    assert.equal(res.body.output_text, 'hello durable world');
    assert.equal(res.body.output[0].type, 'message');
    assert.equal(res.body.output[0].content[0].type, 'output_text');
    assert.equal(res.body.usage.output_tokens, 3);
    assert.equal(res.body.error, null);
  });

  test('a streamed response emits typed events with gap-free sequence numbers as SSE ids', async () => {
    const { http, auth } = ctx();
    await createAgent(ctx, { name: 'streamer', model: { provider: 'fake', script: [{ text: 'one two three', delay_ms: 5 }] } });
    const res = await http.post('/v1/responses').set(auth).send({ model: 'streamer', input: 'go', stream: true });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    const frames = parseSse(res.text);
    frames.forEach((frame, index) => {
      assert.equal(frame.data.sequence_number, index);
      assert.equal(frame.id, String(index));
      assert.equal(frame.event, frame.data.type);
      assert.ok(matchesSchema('ResponseStreamEvent', frame.data).ok, JSON.stringify(frame.data));
    });
    const types = frames.map((f) => f.data.type);
    assert.equal(types[0], 'response.created');
    assert.equal(types[1], 'response.in_progress');
    assert.equal(types.at(-1), 'response.completed');
    const deltas = frames.filter((f) => f.data.type === 'response.output_text.delta').map((f) => f.data.delta);
    assert.deepEqual(deltas, ['one', ' two', ' three']);
    assert.equal(frames.find((f) => f.data.type === 'response.output_text.done')!.data.text, 'one two three');
    assert.equal(types.filter((t) => t === 'response.completed').length, 1);
  });

  test('a background response answers queued at once and completes later', async () => {
    const { http, auth } = ctx();
    await createAgent(ctx, { name: 'slow', model: { provider: 'fake', script: [{ text: 'a b c', delay_ms: 50 }] } });
    const res = await http.post('/v1/responses').set(auth).send({ model: 'slow', input: 'x', background: true });
    assertMatchesSpec(res, 'createResponse');
    assert.equal(res.body.status, 'queued');
    assert.equal(res.body.background, true);
    let current = res.body;
    for (let i = 0; i < 100 && current.status !== 'completed'; i++) {
      await sleep(50);
      const poll = await http.get(`/v1/responses/${res.body.id}`).set(auth);
      assertMatchesSpec(poll, 'getResponse');
      current = poll.body;
    }
    assert.equal(current.status, 'completed');
    assert.equal(current.output_text, 'a b c');
  });

  test('a model provider error that outlasts the retries ends the response failed with the error recorded', async () => {
    const { http, auth } = ctx();
    const script = Array.from({ length: 5 }, () => ({ error: { status: 500, message: 'upstream exploded' } }));
    await createAgent(ctx, { name: 'broken', model: { provider: 'fake', script } });
    const res = await http.post('/v1/responses').set(auth).send({ model: 'broken', input: 'x' });
    assertMatchesSpec(res, 'createResponse');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'failed');
    assert.equal(res.body.error.code, 'model-provider-error');
    assert.equal(res.body.error.provider_status, 500);
    assert.match(res.body.error.message, /upstream exploded/);
  });

  test('a 500 followed by success is retried as a fresh call and completes', async () => {
    const { http, auth } = ctx();
    await createAgent(ctx, {
      name: 'flaky-once',
      model: { provider: 'fake', script: [{ error: { status: 500, message: 'blip' } }, { text: 'recovered fine' }] },
    });
    const res = await http.post('/v1/responses').set(auth).send({ model: 'flaky-once', input: 'x' });
    assertMatchesSpec(res, 'createResponse');
    assert.equal(res.body.status, 'completed');
    assert.equal(res.body.output_text, 'recovered fine');
    assert.equal(res.body.error, null);
  });

  test('a stream cut mid-way is retried into a new item; the completed item holds the text once', async () => {
    const { http, auth } = ctx();
    // A text step with an `error` streams its words, then breaks like a provider stream that was cut.
    const script = [{ text: 'partial words', error: { status: 502, message: 'stream cut' } }, { text: 'whole answer' }];
    await createAgent(ctx, { name: 'cut', model: { provider: 'fake', script } });
    const res = await http.post('/v1/responses').set(auth).send({ model: 'cut', input: 'x' });
    assertMatchesSpec(res, 'createResponse');
    assert.equal(res.body.status, 'completed');
    assert.equal(res.body.output_text, 'whole answer');
    const [cut, whole] = res.body.output;
    assert.deepEqual([cut.status, cut.content[0].text], ['incomplete', 'partial words']);
    assert.deepEqual([whole.status, whole.content[0].text], ['completed', 'whole answer']);
    const frames = parseSse((await http.get(`/v1/responses/${res.body.id}?stream=true`).set(auth)).text);
    const done = frames.filter((f) => f.data.type === 'response.output_item.done').map((f) => [f.data.item.id, f.data.item.status]);
    assert.deepEqual(done, [
      [cut.id, 'incomplete'],
      [whole.id, 'completed'],
    ]);
    frames.forEach((f, i) => assert.equal(f.data.sequence_number, i));
  });

  test('an unknown agent named as model is a 404 problem', async () => {
    const { http, auth } = ctx();
    const res = await http.post('/v1/responses').set(auth).send({ model: 'nobody', input: 'x' });
    assertProblem(res, 404, 'agent-not-found');
  });
});
