// The anthropic adapter, with the real SDK, against a local server replaying
// recordings of Anthropic's Messages API: canonical events, the request it maps,
// provider errors (status, retryable, retry-after, no key), cancellation and timeouts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { AnthropicModel, baseUrlOf } from '../../adapters/models/anthropic/anthropic-messages.js';
import { retryAfterMs } from '../../adapters/models/anthropic/provider-errors.js';
import { MessageStreamReader } from '../../adapters/models/anthropic/stream-reader.js';
import { ModelProviderError, type ModelEvent, type ModelRequest } from '../../core/models/model-port.js';
import type { Item } from '../../generated/schemas.js';
import { startAnthropicServer, type AnthropicTestServer, type RecordedRequest } from '../support/wire/anthropic-server.js';
import { testTransport } from '../support/wire/transport.js';

const KEY = 'sk-ant-api03-PALAI-TEST-KEY-do-not-leak-7f3a9c';

let server: AnthropicTestServer;
before(async () => {
  server = await startAnthropicServer();
});
after(() => server.close());

const user = (text: string): Item => ({ id: 'msg_u', type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const assistant = (text: string): Item => ({ id: 'msg_a', type: 'message', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });

function requestFor(scenario: string, overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: { provider: 'anthropic', name: scenario },
    modelName: scenario,
    credentials: { apiKey: KEY, baseUrl: server.baseUrl },
    transport: testTransport,
    instructions: null,
    items: [user('Hello')],
    tools: [],
    responseId: 'resp_test',
    stepIndex: 0,
    signal: new AbortController().signal,
    ...overrides,
  };
}

interface Outcome {
  events: ModelEvent[];
  error: unknown;
}

async function run(request: ModelRequest, model = new AnthropicModel()): Promise<Outcome> {
  const events: ModelEvent[] = [];
  try {
    for await (const event of model.stream(request)) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

function providerError(outcome: Outcome): ModelProviderError {
  assert.ok(outcome.error instanceof ModelProviderError, `expected a ModelProviderError, got ${String(outcome.error)}`);
  assert.equal(outcome.error.provider, 'anthropic');
  return outcome.error;
}

const lastRequest = (scenario: string): RecordedRequest => {
  const requests = server.requestsFor(scenario);
  assert.ok(requests.length > 0, `no request reached the server for ${scenario}`);
  return requests.at(-1)!;
};

async function closedWithin(recorded: RecordedRequest, ms: number): Promise<void> {
  const timeout = sleep(ms).then(() => Promise.reject(new Error(`the server still had the connection open after ${ms}ms`)));
  await Promise.race([recorded.closed, timeout]);
}

test('a text answer streams as text deltas, then usage and finish', async () => {
  const { events, error } = await run(requestFor('text'));
  assert.equal(error, undefined);
  assert.deepEqual(events, [
    { type: 'text_delta', text: 'Hello' },
    { type: 'text_delta', text: '! How can I' },
    { type: 'text_delta', text: ' help you today?' },
    { type: 'usage', inputTokens: 25, outputTokens: 12, cachedTokens: 0 },
    { type: 'finish', reason: 'stop' },
  ]);
});

test('the request goes to /v1/messages with the key, the API version and a streaming body', async () => {
  await run(requestFor('text'));
  const sent = lastRequest('text');
  assert.equal(sent.method, 'POST');
  assert.equal(sent.path, '/v1/messages');
  // SDK 1.x sends the key as a bearer token, not as x-api-key.
  assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
  assert.equal(sent.headers['x-api-key'], undefined);
  assert.equal(sent.headers['anthropic-version'], '2026-10-21');
  assert.equal(sent.headers['x-stainless-retry-count'], '0');
  assert.deepEqual(sent.body, { model: 'text', max_tokens: 4096, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }], stream: true });
});

test('instructions and system or developer messages become `system`; same-role items merge into one turn', async () => {
  const items: Item[] = [
    { id: 'msg_d', type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Answer in French.' }] },
    user('What is the weather'),
    user(' in Paris and Tokyo?'),
    assistant('Let me look.'),
    { id: 'fc_1', type: 'function_call', call_id: 'toolu_01A', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { id: 'fc_2', type: 'function_call', call_id: 'toolu_01B', name: 'get_weather', arguments: '{"city":"Tokyo"}' },
    { id: 'fco_1', type: 'function_call_output', call_id: 'toolu_01A', output: '18°C, cloudy' },
    { id: 'msg_s', type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Be brief.' }] },
    { id: 'fco_2', type: 'function_call_output', call_id: 'toolu_01B', output: '24°C, sunny' },
    user('Thanks!'),
  ];
  const { error } = await run(requestFor('text', { instructions: 'You are a weather bot.', items }));
  assert.equal(error, undefined);
  const body = lastRequest('text').body;
  assert.equal(body.system, 'You are a weather bot.\n\nAnswer in French.\n\nBe brief.');
  assert.deepEqual(body.messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is the weather' },
        { type: 'text', text: ' in Paris and Tokyo?' },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { city: 'Tokyo' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01A', content: '18°C, cloudy' },
        { type: 'tool_result', tool_use_id: 'toolu_01B', content: '24°C, sunny' },
        { type: 'text', text: 'Thanks!' },
      ],
    },
  ]);
});

test('tool results open their user turn even when a user message came first', async () => {
  const items: Item[] = [
    user('Run it.'),
    { id: 'fc_1', type: 'function_call', call_id: 'toolu_01C', name: 'run', arguments: 'not json' },
    user('(still waiting)'),
    { id: 'fco_1', type: 'function_call_output', call_id: 'toolu_01C', output: '' },
  ];
  await run(requestFor('text', { items }));
  assert.deepEqual(lastRequest('text').body.messages, [
    { role: 'user', content: [{ type: 'text', text: 'Run it.' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01C', name: 'run', input: {} }] },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01C' },
        { type: 'text', text: '(still waiting)' },
      ],
    },
  ]);
});

test('tools map to name, description and input_schema; tool choice and parallelism map to tool_choice', async () => {
  const tools = [
    {
      name: 'get_weather',
      description: 'Current weather of a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
    { name: 'get_time', parameters: {} },
  ];
  await run(requestFor('text', { tools, toolChoice: 'required', parallelToolCalls: false }));
  let body = lastRequest('text').body;
  assert.deepEqual(body.tools, [
    {
      name: 'get_weather',
      description: 'Current weather of a city.',
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
    { name: 'get_time', input_schema: { type: 'object' } },
  ]);
  assert.deepEqual(body.tool_choice, { type: 'any', disable_parallel_tool_use: true });

  await run(requestFor('text', { tools, toolChoice: 'none' }));
  assert.deepEqual(lastRequest('text').body.tool_choice, { type: 'none' });

  await run(requestFor('text', { tools, toolChoice: 'auto' }));
  assert.deepEqual(lastRequest('text').body.tool_choice, { type: 'auto' });

  await run(requestFor('text', { tools, parallelToolCalls: false }));
  assert.deepEqual(lastRequest('text').body.tool_choice, { type: 'auto', disable_parallel_tool_use: true });

  await run(requestFor('text', { tools }));
  body = lastRequest('text').body;
  assert.equal('tool_choice' in body, false);

  await run(requestFor('text', { toolChoice: 'required', parallelToolCalls: false }));
  body = lastRequest('text').body;
  assert.equal('tools' in body, false);
  assert.equal('tool_choice' in body, false);
});

test('max_tokens is the request limit when set, and temperature is not sent (API 2026-10-21 rejects it)', async () => {
  await run(requestFor('text', { maxOutputTokens: 256, temperature: 0.2 }));
  const body = lastRequest('text').body;
  assert.equal(body.max_tokens, 256);
  assert.equal('temperature' in body, false);

  await run(requestFor('text'), new AnthropicModel({ defaultMaxTokens: 1000 }));
  assert.equal(lastRequest('text').body.max_tokens, 1000);
});

test('parallel tool calls are assembled from JSON fragments and emitted when each block stops', async () => {
  const { events, error } = await run(requestFor('parallel-tools'));
  assert.equal(error, undefined);
  assert.deepEqual(events, [
    { type: 'text_delta', text: "I'll check the weather" },
    { type: 'text_delta', text: ' in both cities.' },
    { type: 'tool_call', callId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', arguments: '{"city": "Paris", "unit": "celsius"}' },
    { type: 'tool_call', callId: 'toolu_01Dq6b3xPMKYG8jXgfZbPmnH', name: 'get_weather', arguments: '{"city": "Tokyo", "unit": "celsius"}' },
    { type: 'tool_call', callId: 'toolu_01VbCkd8UxqvZ2hQmLmpZ1Tw', name: 'get_time', arguments: '{}' },
    { type: 'usage', inputTokens: 472, outputTokens: 97, cachedTokens: 0 },
    { type: 'finish', reason: 'tool_calls' },
  ]);
});

test('an output schema is sent as output_config.format and the JSON answer streams as text', async () => {
  const outputSchema = {
    type: 'object',
    properties: { city: { type: 'string' }, temperature_c: { type: 'number', minimum: -90 } },
    required: ['city', 'temperature_c'],
  };
  const { events, error } = await run(requestFor('structured', { outputSchema }));
  assert.equal(error, undefined);
  const text = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');
  assert.deepEqual(JSON.parse(text), { city: 'Paris', temperature_c: 18 });
  assert.deepEqual(events.slice(-2), [
    { type: 'usage', inputTokens: 188, outputTokens: 14, cachedTokens: 0 },
    { type: 'finish', reason: 'stop' },
  ]);
  // The SDK's transform closes objects and moves unsupported constraints into descriptions.
  assert.deepEqual(lastRequest('structured').body.output_config, {
    format: {
      type: 'json_schema',
      schema: {
        type: 'object',
        properties: { city: { type: 'string' }, temperature_c: { type: 'number', description: '{minimum: -90}' } },
        additionalProperties: false,
        required: ['city', 'temperature_c'],
      },
    },
  });
});

test('thinking is skipped, and cache reads and writes count as input tokens (reads as cached)', async () => {
  const { events, error } = await run(requestFor('thinking-cached'));
  assert.equal(error, undefined);
  assert.deepEqual(events, [
    { type: 'text_delta', text: '27 + 15 = 42' },
    { type: 'usage', inputTokens: 14 + 120 + 2048, outputTokens: 61, cachedTokens: 2048 },
    { type: 'finish', reason: 'stop' },
  ]);
});

test('stop_reason max_tokens finishes with length', async () => {
  const { events } = await run(requestFor('max-tokens'));
  assert.deepEqual(events.at(-1), { type: 'finish', reason: 'length' });
});

test('429 is a retryable provider error with its status, short cause and retry-after', async () => {
  const error = providerError(await run(requestFor('rate-limited')));
  assert.equal(error.providerStatus, 429);
  assert.equal(error.retryable, true);
  assert.equal(error.retryAfterMs, 7000);
  assert.match(error.message, /^429 rate_limit_error: This request would exceed your organization's rate limit/);
  assert.ok(error.message.length <= 300, 'the cause is cut to a readable length');
});

test('retry-after-ms wins over retry-after (529 overloaded)', async () => {
  const error = providerError(await run(requestFor('overloaded')));
  assert.equal(error.providerStatus, 529);
  assert.equal(error.retryable, true);
  assert.equal(error.retryAfterMs, 1500);
  assert.equal(error.message, '529 overloaded_error: Overloaded');
});

test('a 500 is retryable, and the next call succeeds (the SDK itself does not retry)', async () => {
  const first = await run(requestFor('fail-then-ok'));
  const error = providerError(first);
  assert.equal(error.providerStatus, 500);
  assert.equal(error.retryable, true);
  assert.equal(error.message, '500 api_error: Internal server error');
  assert.equal(server.requestsFor('fail-then-ok').length, 1);

  const second = await run(requestFor('fail-then-ok'));
  assert.equal(second.error, undefined);
  assert.deepEqual(second.events.at(-1), { type: 'finish', reason: 'stop' });
  assert.equal(server.requestsFor('fail-then-ok').length, 2);
});

test('401 is not retryable and its message never holds the key', async () => {
  const error = providerError(await run(requestFor('unauthorized')));
  assert.equal(error.providerStatus, 401);
  assert.equal(error.retryable, false);
  assert.equal(error.message, '401 authentication_error: invalid x-api-key');
  assert.equal(lastRequest('unauthorized').headers.authorization, `Bearer ${KEY}`);
  assert.ok(!JSON.stringify({ ...error, message: error.message, stack: error.stack }).includes(KEY));
});

test('a key the provider echoes back is redacted from the message', async () => {
  const error = providerError(await run(requestFor('unauthorized-echo')));
  assert.equal(error.providerStatus, 401);
  assert.ok(!error.message.includes(KEY), error.message);
  assert.ok(!String(error.stack).includes(KEY));
  assert.match(error.message, /\[redacted\]/);
});

test('400 is not retryable', async () => {
  const error = providerError(await run(requestFor('bad-request')));
  assert.equal(error.providerStatus, 400);
  assert.equal(error.retryable, false);
  assert.match(error.message, /^400 invalid_request_error: messages\.1\.content\.0/);
});

test('an error event inside the stream fails with the status of its type, after the usage so far', async () => {
  const outcome = await run(requestFor('overloaded-midstream'));
  const error = providerError(outcome);
  assert.equal(error.providerStatus, 529);
  assert.equal(error.retryable, true);
  assert.equal(error.message, 'stream error: overloaded_error: Overloaded');
  assert.deepEqual(outcome.events, [
    { type: 'text_delta', text: 'The' },
    { type: 'usage', inputTokens: 25, outputTokens: 1, cachedTokens: 0 },
  ]);
});

test('a stream cut in the middle is a retryable provider error without status', async () => {
  const outcome = await run(requestFor('cut'));
  const error = providerError(outcome);
  assert.equal(error.providerStatus, undefined);
  assert.equal(error.retryable, true);
  assert.match(error.message, /^stream broke: /);
  assert.deepEqual(outcome.events, [
    { type: 'text_delta', text: 'Hello' },
    { type: 'usage', inputTokens: 25, outputTokens: 1, cachedTokens: 0 },
  ]);
});

test('a connection lost after message_stop does not fail a complete answer', async () => {
  const { events, error } = await run(requestFor('cut-after-stop'));
  assert.equal(error, undefined);
  assert.deepEqual(events.at(-1), { type: 'finish', reason: 'stop' });
});

test('stop reasons map to finish reasons; unknown event types are skipped', () => {
  const finishOf = (stopReason: string | null, blocks: unknown[] = []): ModelEvent | undefined => {
    const reader = new MessageStreamReader();
    const events = [
      { type: 'message_start', message: { usage: { input_tokens: 1, output_tokens: 1 } } },
      ...blocks,
      { type: 'content_block_annotation', index: 0 },
      { type: 'message_delta', delta: { stop_reason: stopReason }, usage: { output_tokens: 2 } },
      { type: 'message_stop' },
    ];
    return events.flatMap((event) => reader.read(event as RawMessageStreamEvent)).at(-1);
  };
  const toolUse = [
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } },
    { type: 'content_block_stop', index: 0 },
  ];
  assert.deepEqual(finishOf('stop_sequence'), { type: 'finish', reason: 'stop' });
  assert.deepEqual(finishOf('refusal'), { type: 'finish', reason: 'stop' });
  assert.deepEqual(finishOf('pause_turn'), { type: 'finish', reason: 'stop' });
  assert.deepEqual(finishOf('model_context_window_exceeded'), { type: 'finish', reason: 'length' });
  assert.deepEqual(finishOf(null), { type: 'finish', reason: 'stop' });
  assert.deepEqual(finishOf(null, toolUse), { type: 'finish', reason: 'tool_calls' });
  assert.deepEqual(finishOf('a_reason_from_the_future', toolUse), { type: 'finish', reason: 'tool_calls' });
});

test('cancelling mid-stream rethrows the abort reason promptly and closes the connection', async () => {
  const controller = new AbortController();
  const events: ModelEvent[] = [];
  let abortedAt = 0;
  const outcome = await (async () => {
    try {
      for await (const event of new AnthropicModel().stream(requestFor('slow', { signal: controller.signal }))) {
        events.push(event);
        if (event.type === 'text_delta' && abortedAt === 0) {
          abortedAt = Date.now();
          controller.abort();
        }
      }
      return undefined;
    } catch (error) {
      return error;
    }
  })();
  const elapsed = Date.now() - abortedAt;
  assert.equal(outcome, controller.signal.reason);
  assert.ok(elapsed < 500, `the stream ended ${elapsed}ms after the abort`);
  assert.equal(events[0].type, 'text_delta');
  assert.ok(!events.some((e) => e.type === 'finish'));
  const sent = lastRequest('slow');
  await closedWithin(sent, 1000);
  assert.equal(sent.finished, false);
  // Played to its end, the recording would have run 1.5 s more.
  assert.ok(sent.closedAt! - abortedAt < 500, `the server saw the close ${sent.closedAt! - abortedAt}ms after the abort`);
});

test('cancelling before the answer starts rethrows the abort reason and closes the connection', async () => {
  const controller = new AbortController();
  const pending = run(requestFor('hang', { signal: controller.signal }));
  await sleep(100);
  const abortedAt = Date.now();
  controller.abort(new Error('run canceled'));
  const outcome = await pending;
  assert.equal(outcome.error, controller.signal.reason);
  assert.ok(Date.now() - abortedAt < 500);
  await closedWithin(lastRequest('hang'), 1000);
});

test('an already aborted signal sends nothing', async () => {
  const before = server.requests.length;
  const controller = new AbortController();
  controller.abort();
  const outcome = await run(requestFor('text', { signal: controller.signal }));
  assert.equal(outcome.error, controller.signal.reason);
  assert.equal(server.requests.length, before);
});

test('a consumer that stops reading closes the connection', async () => {
  for await (const event of new AnthropicModel().stream(requestFor('slow'))) {
    if (event.type === 'text_delta') break;
  }
  await closedWithin(lastRequest('slow'), 1000);
});

test('no answer within the timeout is a retryable provider error', async () => {
  const error = providerError(await run(requestFor('hang'), new AnthropicModel({ timeoutMs: 300 })));
  assert.equal(error.providerStatus, undefined);
  assert.equal(error.retryable, true);
  assert.equal(error.message, 'request timed out after 0.3s');
});

test('a stream that goes quiet for the timeout is a retryable provider error', async () => {
  const outcome = await run(requestFor('stall'), new AnthropicModel({ timeoutMs: 300 }));
  const error = providerError(outcome);
  assert.equal(error.providerStatus, undefined);
  assert.equal(error.message, 'no stream event for 0.3s');
  assert.deepEqual(outcome.events[0], { type: 'text_delta', text: 'Hello' });
  await closedWithin(lastRequest('stall'), 1000);
});

test('an unreachable server is a retryable provider error without status', async () => {
  const closed = await startAnthropicServer();
  await closed.close();
  const error = providerError(await run(requestFor('text', { credentials: { apiKey: KEY, baseUrl: closed.baseUrl } })));
  assert.equal(error.providerStatus, undefined);
  assert.equal(error.retryable, true);
  assert.match(error.message, /^connection failed: .*ECONNREFUSED/);
  assert.ok(!error.message.includes(KEY));
});

test('without a model name nothing is sent and the error is not retryable', async () => {
  const before = server.requests.length;
  const error = providerError(await run(requestFor('text', { modelName: null })));
  assert.equal(error.retryable, false);
  assert.equal(server.requests.length, before);
});

test('without a key a placeholder is sent, never a key from the environment', async () => {
  const saved = { key: process.env.ANTHROPIC_API_KEY, token: process.env.ANTHROPIC_AUTH_TOKEN };
  process.env.ANTHROPIC_API_KEY = 'sk-ant-from-the-environment';
  process.env.ANTHROPIC_AUTH_TOKEN = 'token-from-the-environment';
  try {
    const { error } = await run(requestFor('text', { credentials: { apiKey: null, baseUrl: `${server.baseUrl}/v1/` } }));
    assert.equal(error, undefined);
    const sent = lastRequest('text');
    assert.equal(sent.path, '/v1/messages');
    assert.equal(sent.headers.authorization, 'Bearer no-key');
  } finally {
    for (const [name, value] of [
      ['ANTHROPIC_API_KEY', saved.key],
      ['ANTHROPIC_AUTH_TOKEN', saved.token],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});

test('base URLs: the default endpoint, and a trailing /v1 or slash dropped', () => {
  assert.equal(baseUrlOf(null), 'https://api.anthropic.com');
  assert.equal(baseUrlOf('http://localhost:11434/'), 'http://localhost:11434');
  assert.equal(baseUrlOf('http://proxy.internal/anthropic/v1'), 'http://proxy.internal/anthropic');
});

test('retry-after as an HTTP date becomes the milliseconds until then', () => {
  const at = new Date(Date.now() + 5000).toUTCString();
  const ms = retryAfterMs(new Headers({ 'retry-after': at }));
  assert.ok(ms !== undefined && ms > 3000 && ms <= 5000, String(ms));
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '1.5' })), 1500);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' })), undefined);
  assert.equal(retryAfterMs(new Headers()), undefined);
});
