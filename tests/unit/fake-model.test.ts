// The deterministic fake model: echo without a script, one script step per model
// call, word-by-word deltas, provider errors on demand, and prompt abort.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeModel, splitWords } from '../../adapters/models/fake/fake-model.js';
import { ModelProviderError, type ModelEvent, type ModelRequest } from '../../core/models/model-port.js';
import type { FakeStep, Item } from '../../generated/schemas.js';
import { testTransport } from '../support/wire/transport.js';

const user = (text: string): Item => ({ id: 'msg_u', type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const assistant = (text: string): Item => ({ id: 'msg_a', type: 'message', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });

function requestOf(items: Item[], options: { script?: FakeStep[]; stepIndex?: number; instructions?: string | null; signal?: AbortSignal } = {}): ModelRequest {
  return {
    model: { provider: 'fake', ...(options.script ? { script: options.script } : {}) },
    modelName: null,
    credentials: { apiKey: null, baseUrl: null },
    transport: testTransport,
    instructions: options.instructions ?? null,
    items,
    tools: [],
    responseId: 'resp_test',
    stepIndex: options.stepIndex ?? 0,
    signal: options.signal ?? new AbortController().signal,
  };
}

async function collect(request: ModelRequest): Promise<ModelEvent[]> {
  const events: ModelEvent[] = [];
  for await (const event of new FakeModel().stream(request)) events.push(event);
  return events;
}

const textOf = (events: ModelEvent[]) => events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []));

test('splitWords gives one word per piece, each with its leading whitespace', () => {
  assert.deepEqual(splitWords('one two three'), ['one', ' two', ' three']);
  assert.deepEqual(splitWords('  lead\n\nnew\tline'), ['  lead', '\n\nnew', '\tline']);
  assert.deepEqual(splitWords('single'), ['single']);
});

test('splitWords keeps trailing whitespace as a last piece and returns nothing for empty text', () => {
  assert.deepEqual(splitWords('end  '), ['end', '  ']);
  assert.deepEqual(splitWords('   '), ['   ']);
  assert.deepEqual(splitWords(''), []);
});

test('splitWords pieces always concatenate to exactly the text', () => {
  for (const text of ['', ' ', 'a', ' a b  c\n', 'héllo wörld ✓ 日本 語', '\t\tx\r\ny  ', '{"a": [1, 2]}']) {
    assert.equal(splitWords(text).join(''), text, JSON.stringify(text));
  }
});

test('without a script the model echoes the last user message word by word', async () => {
  const events = await collect(requestOf([user('first message'), assistant('ignored reply'), user('echo  these words')]));
  assert.deepEqual(textOf(events), ['echo', '  these', ' words']);
  assert.deepEqual(events.at(-1), { type: 'finish', reason: 'stop' });
});

test('usage counts the words of the instructions and every item as input, and the words produced as output', async () => {
  const events = await collect(requestOf([user('one two'), assistant('three'), user('four five six')], { instructions: 'be brief' }));
  const usage = events.find((e) => e.type === 'usage');
  assert.deepEqual(usage, { type: 'usage', inputTokens: 2 + 2 + 1 + 3, outputTokens: 3, cachedTokens: 0 });
});

test('with no user message the echo is empty', async () => {
  const events = await collect(requestOf([assistant('only me')]));
  assert.deepEqual(textOf(events), []);
  assert.deepEqual(
    events.map((e) => e.type),
    ['usage', 'finish'],
  );
});

test('the N-th model call plays step N of the script', async () => {
  const script: FakeStep[] = [{ text: 'step zero' }, { text: 'step one here' }];
  assert.deepEqual(textOf(await collect(requestOf([user('x')], { script, stepIndex: 0 }))), ['step', ' zero']);
  assert.deepEqual(textOf(await collect(requestOf([user('x')], { script, stepIndex: 1 }))), ['step', ' one', ' here']);
});

test('past the end of the script the model echoes', async () => {
  const events = await collect(requestOf([user('back to echo')], { script: [{ text: 'only step' }], stepIndex: 1 }));
  assert.deepEqual(textOf(events), ['back', ' to', ' echo']);
});

test('a json step streams the JSON text of its value', async () => {
  const value = { a: 1, b: ['x y', null] };
  const events = await collect(requestOf([user('x')], { script: [{ json: value }] }));
  assert.equal(textOf(events).join(''), JSON.stringify(value));
  assert.deepEqual(events.at(-1), { type: 'finish', reason: 'stop' });
});

test('a tool_calls step yields each call with its JSON arguments, then finishes for tool calls', async () => {
  const events = await collect(
    // The generated type of a free-form object is Record<string, never>, hence the cast.
    requestOf([user('x')], {
      stepIndex: 2,
      script: [{ text: 'a' }, { text: 'b' }, { tool_calls: [{ name: 'search', arguments: { q: 'cats' } as never }, { name: 'now' }] }],
    }),
  );
  assert.deepEqual(events.slice(0, 2), [
    { type: 'tool_call', callId: 'call_fake_test_2_0', name: 'search', arguments: '{"q":"cats"}' },
    { type: 'tool_call', callId: 'call_fake_test_2_1', name: 'now', arguments: '{}' },
  ]);
  const usage = events.find((e): e is Extract<ModelEvent, { type: 'usage' }> => e.type === 'usage');
  assert.equal(usage?.outputTokens, 2);
  assert.deepEqual(events.at(-1), { type: 'finish', reason: 'tool_calls' });
  assert.deepEqual(textOf(events), []);
});

test("a tool call's id names its response: the same step of two responses proposes different calls", async () => {
  const script: FakeStep[] = [{ tool_calls: [{ name: 'now' }] }];
  const idsOf = async (responseId: string) =>
    (await collect({ ...requestOf([user('x')], { script }), responseId })).flatMap((e) => (e.type === 'tool_call' ? [e.callId] : []));
  assert.deepEqual(await idsOf('resp_one'), ['call_fake_one_0_0']);
  assert.deepEqual(await idsOf('resp_two'), ['call_fake_two_0_0']);
});

test('an error step throws a ModelProviderError with the scripted status and message, before any event', async () => {
  const seen: ModelEvent[] = [];
  await assert.rejects(
    async () => {
      for await (const event of new FakeModel().stream(requestOf([user('x')], { script: [{ error: { status: 429, message: 'slow down' } }] })))
        seen.push(event);
    },
    (error: unknown) => {
      assert.ok(error instanceof ModelProviderError);
      assert.equal(error.provider, 'fake');
      assert.equal(error.message, 'slow down');
      assert.equal(error.providerStatus, 429);
      assert.equal(error.retryable, true);
      return true;
    },
  );
  assert.deepEqual(seen, []);
});

test('provider errors are retryable for 429 and 5xx only', () => {
  for (const status of [429, 500, 502, 503]) assert.equal(new ModelProviderError('fake', 'x', status).retryable, true, String(status));
  for (const status of [400, 401, 403, 404]) assert.equal(new ModelProviderError('fake', 'x', status).retryable, false, String(status));
  assert.equal(new ModelProviderError('fake', 'unreachable').retryable, true);
});

test('an abort during a delayed step stops the stream promptly with an AbortError', async () => {
  const abort = new AbortController();
  const received: string[] = [];
  const started = Date.now();
  setTimeout(() => abort.abort(), 100);
  await assert.rejects(
    async () => {
      const request = requestOf([user('x')], { script: [{ text: 'w1 w2 w3 w4 w5 w6', delay_ms: 500 }], signal: abort.signal });
      for await (const event of new FakeModel().stream(request)) if (event.type === 'text_delta') received.push(event.text);
    },
    { name: 'AbortError' },
  );
  assert.ok(received.length >= 1 && received.length < 6, `received ${received.length} words`);
  assert.ok(Date.now() - started < 450, 'the pause was interrupted, not waited out');
});

test('an already aborted signal stops a delayed step at its first pause', async () => {
  const abort = new AbortController();
  abort.abort();
  const received: string[] = [];
  const started = Date.now();
  await assert.rejects(
    async () => {
      const request = requestOf([user('x')], { script: [{ text: 'a b c', delay_ms: 1000 }], signal: abort.signal });
      for await (const event of new FakeModel().stream(request)) if (event.type === 'text_delta') received.push(event.text);
    },
    { name: 'AbortError' },
  );
  assert.ok(received.length <= 1, `received ${received.length} words`);
  assert.ok(Date.now() - started < 500);
});

test('a delay pauses between words, not before the first', async () => {
  const started = Date.now();
  const times: number[] = [];
  for await (const event of new FakeModel().stream(requestOf([user('x')], { script: [{ text: 'a b c', delay_ms: 200 }] }))) {
    if (event.type === 'text_delta') times.push(Date.now() - started);
  }
  assert.equal(times.length, 3);
  assert.ok(times[0] < 150, `first word after ${times[0]}ms`);
  assert.ok(times[2] >= 2 * 200 - 5, `last word after ${times[2]}ms`);
});
