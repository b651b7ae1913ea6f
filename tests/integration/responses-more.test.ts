// More of /v1/responses: conversation chaining, the OpenAI request shape, the
// journal replayed as SSE, and what each step of the fake model's script does.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { createAgent, createSession, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { parseSse, type SseFrame } from '../support/sse.js';
import { matchesSchema } from '../../adapters/http/validation.js';

await describeEachStore('responses (more)', (ctx) => {
  /** The journal of a response as SSE, checked frame by frame against the document. */
  const replay = async (responseId: string, query: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<SseFrame[]> => {
    const { http, auth } = ctx();
    const res = await http
      .get(`/v1/responses/${responseId}`)
      .query({ stream: true, ...query })
      .set(auth)
      .set(headers)
      .timeout(5000);
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    const frames = parseSse(res.text);
    for (const frame of frames) {
      assert.equal(frame.id, String(frame.data.sequence_number));
      assert.equal(frame.event, frame.data.type);
      const check = matchesSchema('ResponseStreamEvent', frame.data);
      assert.ok(check.ok, `${JSON.stringify(check.errors)}: ${JSON.stringify(frame.data)}`);
    }
    return frames;
  };

  before(async () => {
    await createAgent(ctx, { name: 'echo', model: { provider: 'fake' } });
  });

  test('previous_response_id continues a conversation: the model sees the earlier turns', async () => {
    const first = await respond(ctx, { model: 'echo', input: 'alpha beta' });
    assert.equal(first.usage.input_tokens, 2);
    const second = await respond(ctx, { model: 'echo', input: 'gamma', previous_response_id: first.id });
    assert.equal(second.previous_response_id, first.id);
    assert.equal(second.output_text, 'gamma');
    // alpha beta (asked) + alpha beta (answered) + gamma.
    assert.equal(second.usage.input_tokens, 5);
    const third = await respond(ctx, { model: 'echo', input: 'delta', previous_response_id: second.id });
    assert.equal(third.usage.input_tokens, 7, 'the whole chain, not only the last turn');
    assert.equal(third.session_id, null);
  });

  test('previous_response_id: null starts a fresh conversation', async () => {
    const res = await respond(ctx, { model: 'echo', input: 'fresh start', previous_response_id: null });
    assert.equal(res.previous_response_id, null);
    assert.equal(res.usage.input_tokens, 2);
  });

  test('an unknown previous_response_id is a 404 problem', async () => {
    const { http, auth } = ctx();
    const res = await http.post('/v1/responses').set(auth).send({ model: 'echo', input: 'x', previous_response_id: 'resp_00000000000000000000000000' });
    assertMatchesSpec(res, 'createResponse');
    assertProblem(res, 404, 'not-found');
  });

  test("another project's response cannot be continued or read", async () => {
    const { http } = ctx();
    const mine = await respond(ctx, { model: 'echo', input: 'secret words' });
    const other = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
    await createAgent(ctx, { name: 'echo', model: { provider: 'fake' } }, other);
    const cont = await http.post('/v1/responses').set(other).send({ model: 'echo', input: 'x', previous_response_id: mine.id });
    assertProblem(cont, 404, 'not-found');
    const read = await http.get(`/v1/responses/${mine.id}`).set(other);
    assertMatchesSpec(read, 'getResponse');
    assertProblem(read, 404, 'not-found');
    const stream = await http.get(`/v1/responses/${mine.id}?stream=true`).set(other);
    assertProblem(stream, 404, 'not-found');
  });

  test('an unknown response id is a 404 problem', async () => {
    const { http, auth } = ctx();
    const res = await http.get('/v1/responses/resp_00000000000000000000000000').set(auth);
    assertMatchesSpec(res, 'getResponse');
    assertProblem(res, 404, 'not-found');
  });

  test("instructions are recorded and reach the model after the agent's own", async () => {
    await createAgent(ctx, { name: 'instructed', model: { provider: 'fake' }, instructions: 'Be kind.' });
    const plain = await respond(ctx, { model: 'instructed', input: 'hello' });
    assert.equal(plain.instructions, null);
    assert.equal(plain.usage.input_tokens, 3);
    const res = await respond(ctx, { model: 'instructed', input: 'hello', instructions: 'Answer in French.' });
    assert.equal(res.instructions, 'Answer in French.');
    assert.equal(res.usage.input_tokens, 6);
    const read = await ctx().http.get(`/v1/responses/${res.id}`).set(ctx().auth);
    assert.equal(read.body.instructions, 'Answer in French.');
  });

  test('metadata round-trips through create and get; left out or null it is {}', async () => {
    const { http, auth } = ctx();
    const metadata = { order: '42', customer: 'ada' };
    const res = await respond(ctx, { model: 'echo', input: 'x', metadata });
    assert.deepEqual(res.metadata, metadata);
    const read = await http.get(`/v1/responses/${res.id}`).set(auth);
    assertMatchesSpec(read, 'getResponse');
    assert.deepEqual(read.body.metadata, metadata);
    assert.deepEqual((await respond(ctx, { model: 'echo', input: 'x' })).metadata, {});
    assert.deepEqual((await respond(ctx, { model: 'echo', input: 'x', metadata: null })).metadata, {});
  });

  test('OpenAI request fields are tolerated with values Palai honours; the run-level ones are echoed', async () => {
    const res = await respond(ctx, {
      model: 'echo',
      input: 'tolerant',
      temperature: 0.2,
      top_p: 1,
      store: true,
      user: 'user-1',
      truncation: 'disabled',
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      max_output_tokens: 100,
      reasoning: { effort: 'low' },
      text: { format: { type: 'text' } },
      include: [],
      service_tier: 'auto',
      stream: false,
      background: false,
    });
    assert.equal(res.status, 'completed');
    assert.equal(res.output_text, 'tolerant');
    assert.equal(res.temperature, 0.2);
    assert.equal(res.max_output_tokens, 100);
    assert.equal(res.user, 'user-1');
  });

  test('a string input becomes one user message', async () => {
    const { http, auth } = ctx();
    const session = await createSession(ctx, { agent: 'echo' });
    const res = await respond(ctx, { session_id: session.id, input: 'just a string' });
    assert.equal(res.output_text, 'just a string');
    const items = await http.get(`/v1/sessions/${session.id}/items`).set(auth);
    const [user] = items.body.data;
    assert.equal(user.type, 'message');
    assert.equal(user.role, 'user');
    assert.deepEqual(user.content, [{ type: 'input_text', text: 'just a string' }]);
  });

  test('array input takes messages with string content or content parts, and earlier turns', async () => {
    const { http, auth } = ctx();
    const session = await createSession(ctx, { agent: 'echo' });
    const res = await respond(ctx, {
      session_id: session.id,
      input: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'first' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'answer' }] },
        { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{"q":1}' },
        { type: 'function_call_output', call_id: 'c1', output: 'found' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'last ' },
            { type: 'input_text', text: 'one' },
          ],
        },
      ],
    });
    assert.equal(res.output_text, 'last one', 'the fake model echoes the last user message');
    // sys + first + answer + {"q":1} + found + "last one".
    assert.equal(res.usage.input_tokens, 7);
    const items = await http.get(`/v1/sessions/${session.id}/items`).set(auth);
    assertMatchesSpec(items, 'listSessionItems');
    assert.deepEqual(
      items.body.data.map((i: { type: string; role?: string }) => i.role ?? i.type),
      ['system', 'user', 'assistant', 'function_call', 'function_call_output', 'user', 'assistant'],
    );
    assert.deepEqual(items.body.data[2].content, [{ type: 'output_text', text: 'answer', annotations: [] }]);
    assert.deepEqual(
      items.body.data[5].content.map((p: { text: string }) => p.text),
      ['last ', 'one'],
    );
  });

  test('GET with stream=true replays every event of a finished response, the same as the live stream', async () => {
    const { http, auth } = ctx();
    await createAgent(ctx, { name: 'replayed', model: { provider: 'fake', script: [{ text: 'one two three' }] } });
    const live = await http.post('/v1/responses').set(auth).send({ model: 'replayed', input: 'go', stream: true });
    const liveFrames = parseSse(live.text);
    const id = liveFrames[0].data.response.id;
    const frames = await replay(id);
    assert.deepEqual(
      frames.map((f) => f.data.sequence_number),
      frames.map((_, i) => i),
    );
    assert.equal(frames[0].data.type, 'response.created');
    assert.equal(frames.at(-1)!.data.type, 'response.completed');
    assert.deepEqual(
      frames.map((f) => f.data),
      liveFrames.map((f) => f.data),
    );
  });

  test('starting_after=N replays only the events after sequence N', async () => {
    const done = await respond(ctx, { model: 'echo', input: 'a b c d' });
    const all = await replay(done.id);
    const later = await replay(done.id, { starting_after: 3 });
    assert.deepEqual(
      later.map((f) => f.data),
      all.slice(4).map((f) => f.data),
    );
    const everything = await replay(done.id, { starting_after: -1 });
    assert.equal(everything.length, all.length);
  });

  test('a Last-Event-ID header resumes after that event; starting_after wins over it', async () => {
    const done = await respond(ctx, { model: 'echo', input: 'resume me please' });
    const all = await replay(done.id);
    const resumed = await replay(done.id, {}, { 'Last-Event-ID': '5' });
    assert.deepEqual(
      resumed.map((f) => f.data.sequence_number),
      all.slice(6).map((f) => f.data.sequence_number),
    );
    const both = await replay(done.id, { starting_after: 1 }, { 'Last-Event-ID': '5' });
    assert.equal(both[0].data.sequence_number, 2);
  });

  test('resuming after the final event ends the stream at once with no events', async () => {
    const done = await respond(ctx, { model: 'echo', input: 'finished' });
    const all = await replay(done.id);
    const last = all.at(-1)!.data.sequence_number;
    assert.deepEqual(await replay(done.id, { starting_after: last }), []);
    assert.deepEqual(await replay(done.id, {}, { 'Last-Event-ID': String(last) }), []);
    // Beyond the last event is not "nothing more": it names an event that was never sent.
    const beyond = await ctx()
      .http.get(`/v1/responses/${done.id}`)
      .query({ stream: true, starting_after: last + 100 })
      .set(ctx().auth);
    assertProblem(beyond, 400, 'validation-failed');
  });

  test('a text step with delay_ms pauses between words', async () => {
    await createAgent(ctx, { name: 'slow-words', model: { provider: 'fake', script: [{ text: 'w1 w2 w3 w4', delay_ms: 40 }] } });
    const started = Date.now();
    const res = await respond(ctx, { model: 'slow-words', input: 'x' });
    assert.equal(res.output_text, 'w1 w2 w3 w4');
    assert.ok(Date.now() - started >= 3 * 40, 'three pauses between four words');
  });

  test("a json step's output text is the JSON text of its value", async () => {
    const value = { answer: 42, tags: ['a', 'b'], nested: { ok: true } };
    await createAgent(ctx, { name: 'jsonish', model: { provider: 'fake', script: [{ json: value }] } });
    const res = await respond(ctx, { model: 'jsonish', input: 'x' });
    assert.equal(res.status, 'completed');
    // The value, as compact JSON text (the store may order object keys its own way).
    assert.deepEqual(JSON.parse(res.output_text), value);
    assert.equal(res.output_text, JSON.stringify(JSON.parse(res.output_text)));
  });

  // 429 is retried (PALAI_MODEL_MAX_RETRIES, default 4) before it is final; 400 is final at once.
  for (const [status, attempts] of [
    [429, 5],
    [400, 1],
  ]) {
    test(`a provider error ${status} ends the response failed with the error recorded, answered with HTTP 200`, async () => {
      const script = Array.from({ length: attempts }, () => ({ error: { status, message: `provider said ${status}` } }));
      await createAgent(ctx, { name: `err-${status}`, model: { provider: 'fake', script } });
      const res = await respond(ctx, { model: `err-${status}`, input: 'x' });
      assert.equal(res.status, 'failed');
      assert.deepEqual(res.error, {
        code: 'model-provider-error',
        message: `fake: provider said ${status}`,
        type: 'urn:palai:problem:model-provider-error',
        provider_status: status,
      });
      assert.deepEqual(res.output, []);
      assert.equal(typeof res.completed_at, 'number');
      const frames = await replay(res.id);
      const terminal = frames.filter((f) => ['response.completed', 'response.failed', 'response.cancelled', 'response.incomplete'].includes(f.data.type));
      assert.deepEqual(
        terminal.map((f) => f.data.type),
        ['response.failed'],
      );
      assert.deepEqual(terminal[0].data.response.error, res.error);
    });
  }

  test('a call to a tool the agent does not have is answered to the model as an error, and the run goes on', async () => {
    await createAgent(ctx, { name: 'caller', model: { provider: 'fake', script: [{ tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }] } });
    const res = await respond(ctx, { model: 'caller', input: 'weather?' });
    assert.equal(res.status, 'completed');
    // Palai answered the call itself: one mcp_call, holding the error it answered with.
    const [call, answer] = res.output;
    assert.equal(call.type, 'mcp_call');
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.arguments), { city: 'Oslo' });
    assert.match(JSON.parse(call.output).error, /no tool named "get_weather"/);
    assert.equal(res.output.length, 2);
    // Past the end of the script the fake model echoes the last user message.
    assert.equal(answer.type, 'message');
    assert.equal(res.output_text, 'weather?');
  });

  test('text streams word by word: each delta is one word with its leading whitespace, concatenating to the text', async () => {
    const { http, auth } = ctx();
    const text = '  Hello,  world!\nNew line\there  ';
    await createAgent(ctx, { name: 'wordy', model: { provider: 'fake', script: [{ text }] } });
    const live = await http.post('/v1/responses').set(auth).send({ model: 'wordy', input: 'x', stream: true });
    const deltas = parseSse(live.text)
      .filter((f) => f.data.type === 'response.output_text.delta')
      .map((f) => f.data.delta as string);
    assert.deepEqual(deltas, ['  Hello,', '  world!', '\nNew', ' line', '\there', '  ']);
    assert.equal(deltas.join(''), text);
    for (const delta of deltas.slice(0, -1)) assert.match(delta, /^\s*\S+$/);
    const done = parseSse(live.text).find((f) => f.data.type === 'response.output_text.done');
    assert.equal(done!.data.text, text);
    const final = parseSse(live.text).at(-1)!.data.response;
    assert.equal(final.output_text, text);
  });
});
