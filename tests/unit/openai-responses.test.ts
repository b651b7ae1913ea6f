// The `openai` adapter drives the official SDK against a local server that speaks
// OpenAI's Responses wire format: what it sends, what it makes of each recorded
// stream, and how every kind of failure reaches the kernel.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { OpenAIResponsesModel } from '../../adapters/models/openai/openai-responses.js';
import { NO_API_KEY } from '../../adapters/models/shared/openai-client.js';
import type { ModelEvent } from '../../core/models/model-port.js';
import type { Item } from '../../generated/schemas.js';
import { drain, expectProviderError, FAKE_API_KEY, modelRequest, textOf, user, WEATHER_TOOL, withTimeout } from '../support/wire/openai-model-request.js';
import { OpenAIWireServer } from '../support/wire/openai-server.js';

let server: OpenAIWireServer;
const adapter = new OpenAIResponsesModel();
before(async () => {
  server = await OpenAIWireServer.start();
});
after(() => server.close());

const request = (scenario: string, overrides = {}) => modelRequest(server.baseUrl, scenario, overrides);

const providerError = (error: unknown) => expectProviderError(error, 'openai');

describe('streams', () => {
  test('plain text streams as deltas, then usage and finish "stop"', async () => {
    const { events, error } = await drain(adapter, request('scenario-text'));
    assert.equal(error, null);
    assert.deepEqual(events, [
      ...['Paris', ' is', ' the', ' capital', ' of', ' France', '.'].map((text): ModelEvent => ({ type: 'text_delta', text })),
      { type: 'usage', inputTokens: 37, outputTokens: 8, cachedTokens: 0 },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  test('parallel function calls become tool_call events with cached tokens counted and finish "tool_calls"', async () => {
    const { events, error } = await drain(adapter, request('scenario-tools', { tools: [WEATHER_TOOL] }));
    assert.equal(error, null);
    assert.deepEqual(events, [
      { type: 'tool_call', callId: 'call_Qm3xV8yTzR1bL0nK5pWj2hGd', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool_call', callId: 'call_7HcJ2kN9sQ4wE6rT1yU3iO8p', name: 'get_weather', arguments: '{"city":"Tokyo"}' },
      { type: 'usage', inputTokens: 1184, outputTokens: 46, cachedTokens: 1024 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  test('structured output is requested as text.format json_schema and streams as JSON text', async () => {
    const schema = { title: 'weather report', type: 'object', properties: { city: { type: 'string' }, temperature_c: { type: 'number' } } };
    const { events, error } = await drain(adapter, request('scenario-structured', { outputSchema: schema }));
    assert.equal(error, null);
    assert.deepEqual(JSON.parse(textOf(events)), { city: 'Paris', temperature_c: 18 });
    assert.deepEqual(events.slice(-2), [
      { type: 'usage', inputTokens: 52, outputTokens: 10, cachedTokens: 0 },
      { type: 'finish', reason: 'stop' },
    ]);
    assert.deepEqual(server.lastRequest().body.text, { format: { type: 'json_schema', name: 'weather_report', schema, strict: false } });
  });

  test('a response cut off at max_output_tokens finishes with "length"', async () => {
    const { events, error } = await drain(adapter, request('scenario-incomplete', { maxOutputTokens: 16 }));
    assert.equal(error, null);
    assert.equal(textOf(events), 'Once upon a time');
    assert.deepEqual(events.slice(-2), [
      { type: 'usage', inputTokens: 21, outputTokens: 16, cachedTokens: 0 },
      { type: 'finish', reason: 'length' },
    ]);
  });
  test('a server that sends only the terminal response still yields its text and calls', async () => {
    const { events, error } = await drain(adapter, request('scenario-terminal-only'));
    assert.equal(error, null);
    assert.deepEqual(events, [
      { type: 'text_delta', text: 'Hello from a local server.' },
      { type: 'tool_call', callId: 'call_local_01', name: 'get_weather', arguments: '{}' },
      { type: 'usage', inputTokens: 12, outputTokens: 9, cachedTokens: 0 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });
});

describe('the request it sends', () => {
  test('maps instructions, every item kind (a tool call and its result included), tools and options', async () => {
    const items: Item[] = [
      user("What's the weather in Paris?"),
      { id: 'msg_d1', type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Use Celsius.' }] },
      { id: 'msg_a1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }] },
      { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'fco_1', type: 'function_call_output', call_id: 'call_1', output: '{"temp_c":18}' },
    ];
    const { error } = await drain(
      adapter,
      request('scenario-text', {
        instructions: 'Be brief.',
        items,
        tools: [WEATHER_TOOL],
        toolChoice: 'required',
        parallelToolCalls: false,
        maxOutputTokens: 256,
        temperature: 0.2,
      }),
    );
    assert.equal(error, null);
    const sent = server.lastRequest();
    assert.equal(sent.path, '/v1/responses');
    assert.deepEqual(sent.body, {
      model: 'scenario-text',
      stream: true,
      store: false,
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: "What's the weather in Paris?" }] },
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Use Celsius.' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"temp_c":18}' },
      ],
      instructions: 'Be brief.',
      tools: [{ type: 'function', name: 'get_weather', description: 'Current weather for a city.', parameters: WEATHER_TOOL.parameters, strict: false }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      max_output_tokens: 256,
      temperature: 0.2,
    });
    assert.equal(sent.headers.authorization, `Bearer ${FAKE_API_KEY}`);
  });

  test('the calls it emitted go back, with their results, as input the provider can pair up', async () => {
    const first = await drain(adapter, request('scenario-tools', { tools: [WEATHER_TOOL] }));
    const items: Item[] = [user('Weather in Paris and Tokyo?')];
    for (const event of first.events) {
      if (event.type !== 'tool_call') continue;
      items.push({ id: `fc_${event.callId}`, type: 'function_call', call_id: event.callId, name: event.name, arguments: event.arguments });
      items.push({ id: `fco_${event.callId}`, type: 'function_call_output', call_id: event.callId, output: '{"temp_c":20}' });
    }
    await drain(adapter, request('scenario-text', { items, tools: [WEATHER_TOOL] }));
    const input = server.lastRequest().body.input as { type: string; call_id?: string }[];
    assert.deepEqual(
      input.map((item) => [item.type, item.call_id ?? null]),
      [
        ['message', null],
        ['function_call', 'call_Qm3xV8yTzR1bL0nK5pWj2hGd'],
        ['function_call_output', 'call_Qm3xV8yTzR1bL0nK5pWj2hGd'],
        ['function_call', 'call_7HcJ2kN9sQ4wE6rT1yU3iO8p'],
        ['function_call_output', 'call_7HcJ2kN9sQ4wE6rT1yU3iO8p'],
      ],
    );
    assert.ok(
      input.every((item) => !('id' in item)),
      'Palai item ids are not sent',
    );
  });

  test('without tools it sends no tool options, and without instructions no instructions', async () => {
    await drain(adapter, request('scenario-text', { toolChoice: 'auto', parallelToolCalls: true }));
    const body = server.lastRequest().body;
    assert.deepEqual(Object.keys(body).sort(), ['input', 'model', 'store', 'stream']);
  });

  test('a connection without a key sends a placeholder the server may ignore', async () => {
    const { error } = await drain(adapter, modelRequest(server.baseUrl, 'scenario-text', { credentials: { apiKey: null, baseUrl: server.baseUrl } }));
    assert.equal(error, null);
    assert.equal(server.lastRequest().headers.authorization, `Bearer ${NO_API_KEY}`);
  });

  test('OPENAI_* environment variables do not leak into the call: credentials come from the broker only', async () => {
    const saved = { org: process.env.OPENAI_ORG_ID, project: process.env.OPENAI_PROJECT_ID };
    process.env.OPENAI_ORG_ID = 'org-from-env';
    process.env.OPENAI_PROJECT_ID = 'proj-from-env';
    try {
      await drain(adapter, request('scenario-text'));
    } finally {
      for (const [name, value] of [
        ['OPENAI_ORG_ID', saved.org],
        ['OPENAI_PROJECT_ID', saved.project],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    const { headers } = server.lastRequest();
    assert.equal(headers['openai-organization'], undefined);
    assert.equal(headers['openai-project'], undefined);
  });
});

describe('provider errors', () => {
  test('429 is retryable and carries retry-after (seconds) in ms; the SDK itself does not retry', async () => {
    const before = server.requestsFor('scenario-429').length;
    const { events, error } = await drain(adapter, request('scenario-429'));
    assert.deepEqual(events, []);
    const e = providerError(error);
    assert.equal(e.providerStatus, 429);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 7000);
    assert.match(e.message, /^429 Rate limit reached for gpt-4\.1/);
    assert.equal(server.requestsFor('scenario-429').length - before, 1);
  });

  test('retry-after-ms wins over retry-after', async () => {
    const e = providerError((await drain(adapter, request('scenario-429-ms'))).error);
    assert.equal(e.retryAfterMs, 2400);
  });

  test('retry-after as an HTTP date becomes the time until then', async () => {
    const e = providerError((await drain(adapter, request('scenario-429-date'))).error);
    assert.ok(e.retryAfterMs !== undefined && e.retryAfterMs > 25_000 && e.retryAfterMs <= 30_000, `retryAfterMs ${e.retryAfterMs}`);
  });

  test('500 is retryable, and the next call (the kernel retrying) succeeds', async () => {
    const first = providerError((await drain(adapter, request('scenario-500-then-text'))).error);
    assert.equal(first.providerStatus, 500);
    assert.equal(first.retryable, true);
    assert.equal(first.message, '500 The server had an error while processing your request. Sorry about that!');
    assert.equal(server.requestsFor('scenario-500-then-text').length, 1);
    const second = await drain(adapter, request('scenario-500-then-text'));
    assert.equal(second.error, null);
    assert.equal(textOf(second.events), 'Paris is the capital of France.');
  });

  test('401 is not retryable and its message holds no trace of the key the server echoed', async () => {
    const e = providerError((await drain(adapter, request('scenario-401'))).error);
    assert.equal(e.providerStatus, 401);
    assert.equal(e.retryable, false);
    assert.match(e.message, /^401 Incorrect API key provided: \[redacted\]\./);
    assert.ok(!e.message.includes('sk-palai'));
    assert.ok(!String(e.stack).includes(FAKE_API_KEY));
  });

  test('400 is not retryable', async () => {
    const e = providerError((await drain(adapter, request('scenario-400'))).error);
    assert.equal(e.providerStatus, 400);
    assert.equal(e.retryable, false);
    assert.match(e.message, /^400 Your input exceeds the context window/);
  });

  test("a proxy's HTML error page is summarised by its status", async () => {
    const e = providerError((await drain(adapter, request('scenario-502-html'))).error);
    assert.equal(e.message, '502 Bad Gateway');
    assert.equal(e.retryable, true);
  });

  test('response.failed in the stream is a provider error; server_error is retryable', async () => {
    const e = providerError((await drain(adapter, request('scenario-failed'))).error);
    assert.match(e.message, /^response failed: server_error: The server had an error processing your request/);
    assert.equal(e.providerStatus, 500);
    assert.equal(e.retryable, true);
  });

  test('an error event in the stream is a retryable provider error', async () => {
    const e = providerError((await drain(adapter, request('scenario-error-event'))).error);
    assert.match(e.message, /^stream error: rate_limit_exceeded: Rate limit reached/);
    assert.equal(e.providerStatus, undefined);
    assert.equal(e.retryable, true);
  });
});

describe('broken streams and cancellation', () => {
  test('a connection cut mid-stream: the deltas that came, then a retryable error without status', async () => {
    const { events, error } = await drain(adapter, request('scenario-cut'));
    assert.deepEqual(events, [
      { type: 'text_delta', text: 'Paris' },
      { type: 'text_delta', text: ' is' },
    ]);
    const e = providerError(error);
    assert.equal(e.providerStatus, undefined);
    assert.equal(e.retryable, true);
    assert.match(e.message, /^the stream broke: /);
  });

  test('a stream that ends cleanly before response.completed broke too', async () => {
    const { events, error } = await drain(adapter, request('scenario-short'));
    assert.equal(textOf(events), 'Paris is');
    const e = providerError(error);
    assert.equal(e.message, 'the stream ended before response.completed');
    assert.equal(e.retryable, true);
  });

  test('cancelling mid-stream throws the abort reason as is, promptly, and closes the connection', async () => {
    const controller = new AbortController();
    const reason = new Error('canceled by the test');
    const events: ModelEvent[] = [];
    let thrown: unknown = null;
    try {
      for await (const event of adapter.stream(request('scenario-slow', { signal: controller.signal }))) {
        events.push(event);
        if (events.length === 1) {
          controller.abort(reason);
        }
      }
    } catch (error) {
      thrown = error;
    }
    assert.equal(thrown, reason);
    assert.deepEqual(events, [{ type: 'text_delta', text: 'Paris' }]);
    const sent = server.lastRequest();
    await withTimeout(sent.closed, 10_000, 'the server seeing the connection close');
    assert.equal(sent.finished, false);
  });

  test('a signal aborted before the call throws its reason and sends nothing', async () => {
    const controller = new AbortController();
    const reason = new Error('canceled before the call');
    controller.abort(reason);
    const count = server.requests.length;
    const { events, error } = await drain(adapter, request('scenario-text', { signal: controller.signal }));
    assert.equal(error, reason);
    assert.deepEqual(events, []);
    assert.equal(server.requests.length, count);
  });

  test('a provider that goes silent mid-stream times out (retryable) and the connection is closed', async () => {
    const quick = new OpenAIResponsesModel({ timeoutMs: 300 });
    const started = Date.now();
    const { events, error } = await drain(quick, request('scenario-stall'));
    assert.equal(textOf(events), 'Paris is');
    const e = providerError(error);
    assert.match(e.message, /timed out/);
    assert.equal(e.providerStatus, undefined);
    assert.equal(e.retryable, true);
    assert.ok(Date.now() - started < 2000);
    await withTimeout(server.lastRequest().closed, 1000, 'the server seeing the connection close');
  });

  test('a provider that never answers times out before the headers', async () => {
    const quick = new OpenAIResponsesModel({ timeoutMs: 300 });
    const e = providerError((await drain(quick, request('scenario-hang'))).error);
    assert.match(e.message, /timed out/);
    assert.equal(e.retryable, true);
  });

  test('an unreachable server is a retryable connection error without status', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const e = providerError((await drain(adapter, modelRequest(`http://127.0.0.1:${port}/v1`, 'scenario-text'))).error);
    assert.match(e.message, /^connection failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    assert.equal(e.providerStatus, undefined);
    assert.equal(e.retryable, true);
  });
});
