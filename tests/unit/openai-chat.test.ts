// The `openai-chat` adapter drives the official SDK's Chat Completions against a
// local server speaking that wire format, with recordings from OpenAI and from
// compatible servers that differ from it (no usage, whole tool calls, errors in-stream).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { OpenAIChatModel } from '../../adapters/models/openai-chat/openai-chat.js';
import { ToolCallAssembler } from '../../adapters/models/openai-chat/tool-call-assembler.js';
import type { ModelEvent } from '../../core/models/model-port.js';
import type { Item } from '../../generated/schemas.js';
import { drain, expectProviderError, FAKE_API_KEY, modelRequest, textOf, user, WEATHER_TOOL, withTimeout } from '../support/wire/openai-model-request.js';
import { OpenAIWireServer } from '../support/wire/openai-server.js';
import { testTransport } from '../support/wire/transport.js';

let server: OpenAIWireServer;
const adapter = new OpenAIChatModel();
before(async () => {
  server = await OpenAIWireServer.start();
});
after(() => server.close());

const request = (scenario: string, overrides = {}) =>
  modelRequest(server.baseUrl, scenario, { model: { provider: 'openai-chat', name: scenario }, ...overrides });

const providerError = (error: unknown) => expectProviderError(error, 'openai-chat');

describe('streams', () => {
  test('plain text streams as deltas, then usage from the final chunk and finish "stop"', async () => {
    const { events, error } = await drain(adapter, request('scenario-text'));
    assert.equal(error, null);
    assert.deepEqual(events, [
      ...['Paris', ' is', ' the', ' capital', ' of', ' France', '.'].map((text): ModelEvent => ({ type: 'text_delta', text })),
      { type: 'usage', inputTokens: 31, outputTokens: 8, cachedTokens: 0 },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  test('parallel tool calls streamed in fragments are assembled by index and emitted whole at the end', async () => {
    const { events, error } = await drain(adapter, request('scenario-tools', { tools: [WEATHER_TOOL] }));
    assert.equal(error, null);
    assert.deepEqual(events, [
      { type: 'tool_call', callId: 'call_Qm3xV8yTzR1bL0nK5pWj2hGd', name: 'get_weather', arguments: '{"city": "Paris"}' },
      { type: 'tool_call', callId: 'call_7HcJ2kN9sQ4wE6rT1yU3iO8p', name: 'get_weather', arguments: '{"city": "Tokyo"}' },
      { type: 'usage', inputTokens: 1202, outputTokens: 51, cachedTokens: 1152 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  test('structured output is requested as response_format json_schema and streams as JSON text', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' }, temperature_c: { type: 'number' } } };
    const { events, error } = await drain(adapter, request('scenario-structured', { outputSchema: schema }));
    assert.equal(error, null);
    assert.deepEqual(JSON.parse(textOf(events)), { city: 'Paris', temperature_c: 18 });
    assert.deepEqual(server.lastRequest().body.response_format, { type: 'json_schema', json_schema: { name: 'output', schema, strict: false } });
  });

  test('finish_reason "length" finishes with "length"', async () => {
    const { events, error } = await drain(adapter, request('scenario-length', { maxOutputTokens: 16 }));
    assert.equal(error, null);
    assert.equal(textOf(events), 'Once upon a time');
    assert.deepEqual(events.slice(-2), [
      { type: 'usage', inputTokens: 19, outputTokens: 16, cachedTokens: 0 },
      { type: 'finish', reason: 'length' },
    ]);
  });

  test('a server that ignores stream_options still works, with zero usage', async () => {
    const { events, error } = await drain(adapter, request('scenario-local-text'));
    assert.equal(error, null);
    assert.deepEqual(events, [
      { type: 'text_delta', text: 'Hello' },
      { type: 'text_delta', text: ' there' },
      { type: 'usage', inputTokens: 0, outputTokens: 0, cachedTokens: 0 },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  test('whole tool calls sent at one index with distinct ids stay separate, and finish "stop" with calls means "tool_calls"', async () => {
    const { events, error } = await drain(adapter, request('scenario-local-tools', { tools: [WEATHER_TOOL] }));
    assert.equal(error, null);
    assert.deepEqual(events, [
      { type: 'tool_call', callId: 'call_x1ylk2wb', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool_call', callId: 'call_9q0rz3mf', name: 'get_time', arguments: '{}' },
      { type: 'usage', inputTokens: 0, outputTokens: 0, cachedTokens: 0 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });
});

describe('the request it sends', () => {
  test('maps instructions and items to chat messages, folding calls into the assistant turn, with tools and options', async () => {
    const call = (id: string, city: string): Item => ({
      id: `fc_${id}`,
      type: 'function_call',
      call_id: id,
      name: 'get_weather',
      arguments: `{"city":"${city}"}`,
    });
    const result = (id: string, output: string): Item => ({ id: `fco_${id}`, type: 'function_call_output', call_id: id, output });
    const items: Item[] = [
      user('Weather in Paris and Tokyo?'),
      { id: 'msg_d1', type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Use Celsius.' }] },
      { id: 'msg_a1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }] },
      call('call_1', 'Paris'),
      call('call_2', 'Tokyo'),
      result('call_1', '{"temp_c":18}'),
      result('call_2', '{"temp_c":24}'),
      { id: 'msg_a2', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Paris 18, Tokyo 24.', annotations: [] }] },
      user('And Rome?', 'msg_u2'),
      call('call_3', 'Rome'),
      result('call_3', '{"temp_c":21}'),
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
    assert.equal(sent.path, '/v1/chat/completions');
    const toolCall = (id: string, city: string) => ({ id, type: 'function', function: { name: 'get_weather', arguments: `{"city":"${city}"}` } });
    assert.deepEqual(sent.body, {
      model: 'scenario-text',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris and Tokyo?' },
        { role: 'system', content: 'Use Celsius.' },
        { role: 'assistant', content: 'Let me check.', tool_calls: [toolCall('call_1', 'Paris'), toolCall('call_2', 'Tokyo')] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":18}' },
        { role: 'tool', tool_call_id: 'call_2', content: '{"temp_c":24}' },
        { role: 'assistant', content: 'Paris 18, Tokyo 24.' },
        { role: 'user', content: 'And Rome?' },
        { role: 'assistant', content: null, tool_calls: [toolCall('call_3', 'Rome')] },
        { role: 'tool', tool_call_id: 'call_3', content: '{"temp_c":21}' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Current weather for a city.', parameters: WEATHER_TOOL.parameters } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      max_tokens: 256,
      temperature: 0.2,
    });
    assert.equal(sent.headers.authorization, `Bearer ${FAKE_API_KEY}`);
  });

  test('it goes to the path and with the headers the SDK itself sends (key, user agent, its platform headers), call after call', async () => {
    // Through the same transport: what differs would be the adapter's doing, not fetch's.
    const sdk = new OpenAI({
      apiKey: FAKE_API_KEY,
      baseURL: server.baseUrl,
      maxRetries: 0,
      timeout: 120_000,
      organization: null,
      project: null,
      fetch: testTransport,
    });
    for await (const _ of await sdk.chat.completions.create({ model: 'scenario-text', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
    const bySdk = server.lastRequest();
    for (let call = 0; call < 2; call++) {
      const { error } = await drain(adapter, request('scenario-text'));
      assert.equal(error, null);
      const sent = server.lastRequest();
      assert.equal(sent.path, bySdk.path);
      const headers = (recorded: typeof sent) => {
        const { 'content-length': _length, host: _host, connection: _connection, 'accept-encoding': _encoding, ...rest } = recorded.headers;
        return rest;
      };
      assert.deepEqual(headers(sent), headers(bySdk));
      assert.equal(sent.headers.authorization, `Bearer ${FAKE_API_KEY}`);
      assert.match(String(sent.headers['user-agent']), /^OpenAI\/JS /);
    }
  });

  test('without tools it sends no tool options', async () => {
    await drain(adapter, request('scenario-text', { parallelToolCalls: true, toolChoice: 'auto' }));
    assert.deepEqual(Object.keys(server.lastRequest().body).sort(), ['messages', 'model', 'stream', 'stream_options']);
  });
});

describe('provider errors', () => {
  test('429 is retryable with retry-after in ms, and the SDK itself does not retry', async () => {
    const { events, error } = await drain(adapter, request('scenario-429'));
    assert.deepEqual(events, []);
    const e = providerError(error);
    assert.equal(e.providerStatus, 429);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 7000);
    assert.equal(server.requestsFor('scenario-429').length, 1);
  });

  test('500 is retryable, and the next call succeeds', async () => {
    const first = providerError((await drain(adapter, request('scenario-500-then-text'))).error);
    assert.equal(first.providerStatus, 500);
    assert.equal(first.retryable, true);
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
  });

  test('400 is not retryable', async () => {
    const e = providerError((await drain(adapter, request('scenario-400'))).error);
    assert.equal(e.providerStatus, 400);
    assert.equal(e.retryable, false);
  });

  test('an error object inside the stream (as vLLM sends it) is a retryable provider error after the text so far', async () => {
    const { events, error } = await drain(adapter, request('scenario-stream-error'));
    assert.deepEqual(events, [{ type: 'text_delta', text: 'Partial' }]);
    const e = providerError(error);
    assert.equal(e.message, 'stream error: The engine crashed while decoding; see the server logs.');
    assert.equal(e.providerStatus, undefined);
    assert.equal(e.retryable, true);
  });
});

describe('broken streams and cancellation', () => {
  test('a connection cut mid-stream: the deltas that came, then a retryable error without status', async () => {
    const { events, error } = await drain(adapter, request('scenario-cut'));
    assert.equal(textOf(events), 'Paris is the capital of');
    assert.ok(events.every((e) => e.type === 'text_delta'));
    const e = providerError(error);
    assert.match(e.message, /^the stream broke: /);
    assert.equal(e.providerStatus, undefined);
    assert.equal(e.retryable, true);
  });

  test('a stream that ends cleanly without a finish_reason broke too', async () => {
    const { events, error } = await drain(adapter, request('scenario-short'));
    assert.equal(textOf(events), 'Paris is the capital of');
    assert.equal(providerError(error).message, 'the stream ended without a finish_reason');
  });

  test('cancelling mid-stream throws the abort reason as is, promptly, and closes the connection', async () => {
    const controller = new AbortController();
    const reason = new Error('canceled by the test');
    const events: ModelEvent[] = [];
    let thrown: unknown = null;
    try {
      for await (const event of adapter.stream(request('scenario-slow', { signal: controller.signal }))) {
        events.push(event);
        controller.abort(reason);
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

  test('a server that goes silent mid-stream times out (retryable) and the connection is closed', async () => {
    const quick = new OpenAIChatModel({ timeoutMs: 300 });
    const { events, error } = await drain(quick, request('scenario-stall'));
    assert.equal(textOf(events), 'Paris is the capital of');
    const e = providerError(error);
    assert.match(e.message, /timed out/);
    assert.equal(e.retryable, true);
    await withTimeout(server.lastRequest().closed, 1000, 'the server seeing the connection close');
  });
});

describe('tool call assembly', () => {
  test('fragments join by index; a repeated name is not doubled; missing ids and empty arguments are filled in', () => {
    const calls = new ToolCallAssembler();
    calls.add({ index: 0, function: { name: 'get_time', arguments: '' } });
    calls.add({ index: 1, id: 'call_b', function: { name: 'get_weather', arguments: '{"city":' } });
    calls.add({ index: 1, function: { name: 'get_weather', arguments: '"Oslo"}' } });
    const [first, second] = calls.finish();
    assert.match(first.callId, /^call_[0-9a-f]{32}$/);
    assert.deepEqual({ ...first, callId: 'x' }, { callId: 'x', name: 'get_time', arguments: '{}' });
    assert.deepEqual(second, { callId: 'call_b', name: 'get_weather', arguments: '{"city":"Oslo"}' });
  });
});
