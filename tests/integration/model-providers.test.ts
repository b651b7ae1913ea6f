// The real model adapters driven through the whole kernel: an agent whose model
// block points at a local server speaking the provider's wire format, replaying
// recorded answers. What the caller sees (text, usage, status, errors) and what
// the provider receives (key, tool turns) are both checked, for each provider.
// The servers are the operator's configured provider URLs (OPENAI_BASE_URL,
// ANTHROPIC_BASE_URL), so the server's keys may go to them.
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAgent, respond } from '../support/api.js';
import { within } from '../support/cli.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec } from '../support/spec.js';
import { parseSse } from '../support/sse.js';
import { startAnthropicServer, type AnthropicTestServer } from '../support/wire/anthropic-server.js';
import { OpenAIWireServer } from '../support/wire/openai-server.js';

/** Recognisable, so a test can prove they never leak. */
const OPENAI_KEY = 'sk-palai-providers-openai-5d0c3b9e1f7a4c26';
const ANTHROPIC_KEY = 'sk-ant-palai-providers-8e2f6a1d9c4b7e30';

/** What the wire servers have in common: the requests they received. */
interface WireRequest {
  headers: IncomingHttpHeaders;
  body: any;
  receivedAt: number;
  closed: Promise<void>;
  finished: boolean;
}

interface Usage {
  input: number;
  output: number;
  cached: number;
}

interface Call {
  call_id: string;
  name: string;
  arguments: string;
}
interface Output {
  call_id: string;
  output: string;
}

interface ProviderCase {
  provider: 'openai' | 'openai-chat' | 'anthropic';
  baseUrl(): string;
  requestsFor(scenario: string): WireRequest[];
  key: string;
  /** The key as the request carried it. */
  credentialOf(headers: IncomingHttpHeaders): string;
  /** Scenario names of the provider's wire server. */
  scenario: {
    text: string;
    toolsThenText: string;
    /** Tool calls on every request. */
    tools: string;
    rateLimitedThenText: string;
    failThenText: string;
    unauthorized: string;
    cutThenText: string;
    stall: string;
  };
  /** The recorded plain answer, its usage, and the part of it streamed before the cut. */
  text: string;
  usage: Usage;
  partial: string;
  /** The calls the recorded tool stream proposes, in order. */
  callIds: string[];
  /** Usage of the tool stream plus the answer after it. */
  toolRoundTripUsage: Usage;
  /** Asserts the request after the tool results carries the calls and their outputs in the provider's format. */
  assertToolTurn(body: any, calls: Call[], outputs: Output[]): void;
}

/** One server answers both OpenAI APIs (it counts scenarios per API), since OPENAI_API_KEY is bound to one base URL. */
const openai = await OpenAIWireServer.start();
const anthropic: AnthropicTestServer = await startAnthropicServer();
after(() => Promise.all([openai.close(), anthropic.close()]));

const OPENAI_SCENARIOS = {
  text: 'scenario-text',
  toolsThenText: 'scenario-tools-then-text',
  tools: 'scenario-tools',
  rateLimitedThenText: 'scenario-429-then-text',
  failThenText: 'scenario-500-then-text',
  unauthorized: 'scenario-401',
  cutThenText: 'scenario-cut-then-text',
  stall: 'scenario-stall',
};
const bearer = (headers: IncomingHttpHeaders) => String(headers.authorization ?? '').replace(/^Bearer /, '');

const PROVIDERS: ProviderCase[] = [
  {
    provider: 'openai',
    baseUrl: () => openai.baseUrl,
    requestsFor: (scenario) => openai.requestsFor(scenario, 'responses'),
    key: OPENAI_KEY,
    credentialOf: bearer,
    scenario: OPENAI_SCENARIOS,
    text: 'Paris is the capital of France.',
    usage: { input: 37, output: 8, cached: 0 },
    partial: 'Paris is',
    callIds: ['call_Qm3xV8yTzR1bL0nK5pWj2hGd', 'call_7HcJ2kN9sQ4wE6rT1yU3iO8p'],
    toolRoundTripUsage: { input: 1184 + 37, output: 46 + 8, cached: 1024 },
    assertToolTurn(body, calls, outputs) {
      const input = body.input as any[];
      assert.deepEqual(
        input.map((item) => item.type),
        ['message', ...calls.map(() => 'function_call'), ...outputs.map(() => 'function_call_output')],
      );
      assert.deepEqual(
        input.filter((item) => item.type === 'function_call'),
        calls.map((c) => ({ type: 'function_call', call_id: c.call_id, name: c.name, arguments: c.arguments })),
      );
      assert.deepEqual(
        input.filter((item) => item.type === 'function_call_output'),
        outputs.map((o) => ({ type: 'function_call_output', call_id: o.call_id, output: o.output })),
      );
    },
  },
  {
    provider: 'openai-chat',
    baseUrl: () => openai.baseUrl,
    requestsFor: (scenario) => openai.requestsFor(scenario, 'chat'),
    key: OPENAI_KEY,
    credentialOf: bearer,
    scenario: OPENAI_SCENARIOS,
    text: 'Paris is the capital of France.',
    usage: { input: 31, output: 8, cached: 0 },
    partial: 'Paris is the capital of',
    callIds: ['call_Qm3xV8yTzR1bL0nK5pWj2hGd', 'call_7HcJ2kN9sQ4wE6rT1yU3iO8p'],
    toolRoundTripUsage: { input: 1202 + 31, output: 51 + 8, cached: 1152 },
    assertToolTurn(body, calls, outputs) {
      const messages = body.messages as any[];
      assert.deepEqual(
        messages.map((m) => m.role),
        ['user', 'assistant', ...outputs.map(() => 'tool')],
      );
      assert.deepEqual(messages[1], {
        role: 'assistant',
        content: null,
        tool_calls: calls.map((c) => ({ id: c.call_id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
      });
      assert.deepEqual(
        messages.slice(2),
        outputs.map((o) => ({ role: 'tool', tool_call_id: o.call_id, content: o.output })),
      );
    },
  },
  {
    provider: 'anthropic',
    baseUrl: () => anthropic.baseUrl,
    requestsFor: (scenario) => anthropic.requestsFor(scenario),
    key: ANTHROPIC_KEY,
    // The SDK sends the key as a bearer token; Anthropic's own header is x-api-key.
    credentialOf: (headers) => String(headers['x-api-key'] ?? bearer(headers)),
    scenario: {
      text: 'text',
      toolsThenText: 'tools-then-text',
      tools: 'parallel-tools',
      rateLimitedThenText: 'rate-limited-then-ok',
      failThenText: 'fail-then-ok',
      unauthorized: 'unauthorized-echo',
      cutThenText: 'cut-then-ok',
      stall: 'stall',
    },
    text: 'Hello! How can I help you today?',
    usage: { input: 25, output: 12, cached: 0 },
    partial: 'Hello',
    callIds: ['toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'toolu_01Dq6b3xPMKYG8jXgfZbPmnH', 'toolu_01VbCkd8UxqvZ2hQmLmpZ1Tw'],
    toolRoundTripUsage: { input: 472 + 25, output: 97 + 12, cached: 0 },
    assertToolTurn(body, calls, outputs) {
      const messages = body.messages as any[];
      assert.deepEqual(
        messages.map((m) => m.role),
        ['user', 'assistant', 'user'],
      );
      assert.deepEqual(messages[1].content, [
        { type: 'text', text: "I'll check the weather in both cities." },
        ...calls.map((c) => ({ type: 'tool_use', id: c.call_id, name: c.name, input: JSON.parse(c.arguments) })),
      ]);
      assert.deepEqual(
        messages[2].content,
        outputs.map((o) => ({ type: 'tool_result', tool_use_id: o.call_id, content: o.output })),
      );
    },
  },
];

const CLIENT_TOOLS = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'Current weather for a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] },
  },
  { type: 'function', name: 'get_time', description: 'The current time.', parameters: { type: 'object', properties: {} } },
];

const usageOf = (response: any): Usage => ({
  input: response.usage.input_tokens,
  output: response.usage.output_tokens,
  cached: response.usage.input_tokens_details.cached_tokens,
});

await describeEachStore(
  'model providers',
  (ctx) => {
    before(async () => {
      // Each store's suite starts with servers that have seen nothing, so scenarios that answer their first request differently start afresh.
      openai.reset();
      anthropic.reset();
    });
    const journal = async (responseId: string): Promise<{ type: string; data: any }[]> => {
      const { rows } = await ctx().hub.kernel.db.query<{ type: string; data: any }>(
        'SELECT type, data FROM response_events WHERE response_id = $1 ORDER BY sequence',
        [responseId],
      );
      return rows;
    };

    const getResponse = async (id: string) => {
      const res = await ctx().http.get(`/v1/responses/${id}`).set(ctx().auth);
      assertMatchesSpec(res, 'getResponse');
      assert.equal(res.status, 200, res.text);
      return res.body;
    };

    const agentFor = (p: ProviderCase, name: string, scenario: string, extra: Record<string, unknown> = {}) =>
      createAgent(ctx, { name, model: { provider: p.provider, name: scenario, base_url: p.baseUrl() }, ...extra });

    for (const p of PROVIDERS) {
      describe(p.provider, () => {
        test('a plain answer completes with the recorded text and usage, and the provider got the key', async () => {
          await agentFor(p, `${p.provider}-text`, p.scenario.text);
          const earlier = p.requestsFor(p.scenario.text).length;
          const res = await respond(ctx, { model: `${p.provider}-text`, input: 'What is the capital of France?' });
          assert.equal(res.status, 'completed', JSON.stringify(res.error));
          assert.equal(res.output_text, p.text);
          assert.deepEqual(usageOf(res), p.usage);
          assert.equal(res.usage.total_tokens, p.usage.input + p.usage.output);
          const sent = p.requestsFor(p.scenario.text).slice(earlier);
          assert.equal(sent.length, 1);
          assert.equal(p.credentialOf(sent[0].headers), p.key);
          assert.ok(JSON.stringify(sent[0].body).includes('What is the capital of France?'), 'the user input reached the provider');
        });

        test("a request's temperature and max_output_tokens reach the provider over the agent's own", async () => {
          await createAgent(ctx, {
            name: `${p.provider}-tuned`,
            model: { provider: p.provider, name: p.scenario.text, base_url: p.baseUrl(), temperature: 0.9, max_output_tokens: 500 },
          });
          const earlier = p.requestsFor(p.scenario.text).length;
          const res = await respond(ctx, { model: `${p.provider}-tuned`, input: 'tuned', temperature: 0.25, max_output_tokens: 64 });
          assert.equal(res.status, 'completed', JSON.stringify(res.error));
          assert.equal(res.temperature, 0.25);
          assert.equal(res.max_output_tokens, 64);
          const [sent] = p.requestsFor(p.scenario.text).slice(earlier);
          const body = sent.body as Record<string, unknown>;
          const cap = { openai: 'max_output_tokens', 'openai-chat': 'max_tokens', anthropic: 'max_tokens' }[p.provider];
          assert.equal(body[cap], 64);
          // The Anthropic API version Palai speaks takes no temperature (request-mapping.ts).
          if (p.provider !== 'anthropic') assert.equal(body.temperature, 0.25);
        });

        test("a request's tools, tool_choice, top_p and parallel_tool_calls reach the provider in its own terms, and are echoed", async () => {
          await agentFor(p, `${p.provider}-request-tools`, p.scenario.tools);
          const earlier = p.requestsFor(p.scenario.tools).length;
          const choice = { type: 'function', name: 'get_weather' };
          const res = await respond(ctx, {
            model: `${p.provider}-request-tools`,
            input: 'Weather?',
            tools: CLIENT_TOOLS,
            tool_choice: choice,
            top_p: 0.5,
            parallel_tool_calls: false,
          });
          assert.equal(res.palai_status, 'waiting_for_tool', JSON.stringify(res.error));
          assert.deepEqual(
            res.tools.map((t: { name: string }) => t.name),
            ['get_weather', 'get_time'],
          );
          assert.deepEqual(res.tool_choice, choice);
          assert.equal(res.top_p, 0.5);
          assert.equal(res.parallel_tool_calls, false);
          const [sent] = p.requestsFor(p.scenario.tools).slice(earlier);
          const body = sent.body as Record<string, any>;
          assert.deepEqual(toolNamesSent(p, body), ['get_weather', 'get_time'], "the request's functions were offered");
          const expected = {
            openai: { type: 'function', name: 'get_weather' },
            'openai-chat': { type: 'function', function: { name: 'get_weather' } },
            anthropic: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
          }[p.provider];
          assert.deepEqual(body.tool_choice, expected);
          if (p.provider !== 'anthropic') {
            assert.equal(body.top_p, 0.5);
            assert.equal(body.parallel_tool_calls, false);
          }
        });

        test("a streamed answer's text deltas add up to the recorded text", async () => {
          await agentFor(p, `${p.provider}-stream`, p.scenario.text);
          const res = await ctx()
            .http.post('/v1/responses')
            .set(ctx().auth)
            .send({ model: `${p.provider}-stream`, input: 'hi', stream: true });
          assert.equal(res.status, 200, res.text);
          assert.match(String(res.headers['content-type']), /^text\/event-stream/);
          const events = parseSse(res.text).map((frame) => frame.data);
          const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta);
          assert.ok(deltas.length > 1, `streamed in pieces: ${JSON.stringify(deltas)}`);
          assert.equal(deltas.join(''), p.text);
          assert.equal(events.at(-1).type, 'response.completed');
          assert.equal(events.at(-1).response.output_text, p.text);
        });

        test('a tool round trip: the recorded calls wait for outputs, and the next request carries calls and outputs', async () => {
          await agentFor(p, `${p.provider}-tools`, p.scenario.toolsThenText, { tools: CLIENT_TOOLS });
          const waiting = await respond(ctx, { model: `${p.provider}-tools`, input: 'Weather in Paris and Tokyo?' });
          assert.equal(waiting.palai_status, 'waiting_for_tool', JSON.stringify(waiting.error));
          const calls: Call[] = waiting.required_action.calls.map((c: Call) => ({ call_id: c.call_id, name: c.name, arguments: c.arguments }));
          assert.deepEqual(
            calls.map((c) => c.call_id),
            p.callIds,
          );
          const first = p.requestsFor(p.scenario.toolsThenText);
          assert.equal(first.length, 1);
          assert.deepEqual(
            toolNamesSent(p, first[0].body),
            CLIENT_TOOLS.map((t) => t.name),
            'the agent tools were offered to the model',
          );

          const outputs: Output[] = calls.map((c) => ({
            call_id: c.call_id,
            output: c.name === 'get_time' ? '12:00' : `sunny in ${JSON.parse(c.arguments).city}`,
          }));
          const res = await ctx().http.post(`/v1/responses/${waiting.id}/tool_outputs`).set(ctx().auth).send({ outputs });
          assertMatchesSpec(res, 'submitToolOutputs');
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.status, 'completed', JSON.stringify(res.body.error));
          const last = res.body.output.at(-1);
          assert.equal(last.type, 'message');
          assert.equal(last.content[0].text, p.text);
          assert.deepEqual(usageOf(res.body), p.toolRoundTripUsage);

          const sent = p.requestsFor(p.scenario.toolsThenText);
          assert.equal(sent.length, 2);
          p.assertToolTurn(sent[1].body, calls, outputs);
        });

        test('429 with retry-after: the retry waits that long, then completes', async () => {
          await agentFor(p, `${p.provider}-429`, p.scenario.rateLimitedThenText);
          const res = await respond(ctx, { model: `${p.provider}-429`, input: 'hi' });
          assert.equal(res.status, 'completed', JSON.stringify(res.error));
          assert.equal(res.output_text, p.text);
          assert.equal(res.output.length, 1, 'the rejected call streamed nothing');
          const sent = p.requestsFor(p.scenario.rateLimitedThenText);
          assert.equal(sent.length, 2);
          const waited = sent[1].receivedAt - sent[0].receivedAt;
          // retry-after: 1 (s), against a retry base of 10 ms in tests.
          assert.ok(waited >= 950 && waited < 5_000, `the retry came ${waited} ms after the 429`);
        });

        test('500 then success: retried and completed', async () => {
          await agentFor(p, `${p.provider}-500`, p.scenario.failThenText);
          const res = await respond(ctx, { model: `${p.provider}-500`, input: 'hi' });
          assert.equal(res.status, 'completed', JSON.stringify(res.error));
          assert.equal(res.output_text, p.text);
          assert.equal(p.requestsFor(p.scenario.failThenText).length, 2);
        });

        test('401: failed with the provider status, named provider, and no trace of the key', async () => {
          await agentFor(p, `${p.provider}-401`, p.scenario.unauthorized);
          const res = await respond(ctx, { model: `${p.provider}-401`, input: 'hi' });
          assert.equal(res.status, 'failed');
          assert.equal(res.error.code, 'model-provider-error');
          assert.equal(res.error.provider_status, 401);
          assert.ok(res.error.message.startsWith(`${p.provider}: `), res.error.message);
          assert.equal(p.requestsFor(p.scenario.unauthorized).length, 1, 'a 401 is not retried');
          // The provider's error body repeats the credential; none of it may come back.
          assert.ok(!res.error.message.includes(p.key), res.error.message);
          assert.ok(!JSON.stringify(res).includes(p.key), 'the key is in the response');
          assert.ok(!JSON.stringify(await journal(res.id)).includes(p.key), 'the key is in the journal');
          const events = await ctx().http.get(`/v1/responses/${res.id}/events`).set(ctx().auth);
          assert.equal(events.status, 200);
          assert.ok(!events.text.includes(p.key), 'the key is in the event stream');
          assert.equal(parseSse(events.text).at(-1)!.data.type, 'response.failed');
        });

        test('a stream cut midway is retried as a fresh step: the partial item incomplete, the full text once', async () => {
          await agentFor(p, `${p.provider}-cut`, p.scenario.cutThenText);
          const res = await respond(ctx, { model: `${p.provider}-cut`, input: 'hi' });
          assert.equal(res.status, 'completed', JSON.stringify(res.error));
          assert.equal(p.requestsFor(p.scenario.cutThenText).length, 2);
          assert.deepEqual(
            res.output.map((item: any) => [item.type, item.status, item.content[0].text]),
            [
              ['message', 'incomplete', p.partial],
              ['message', 'completed', p.text],
            ],
          );
          assert.notEqual(res.output[0].id, res.output[1].id);
          assert.equal(res.output_text, p.text);
          const [cut, retry] = p.requestsFor(p.scenario.cutThenText);
          assert.deepEqual(conversationSent(retry.body), conversationSent(cut.body), 'the retry does not show the model its partial answer');
        });

        test('a slow stream canceled via /cancel ends canceled, and the provider sees the connection close', async () => {
          await agentFor(p, `${p.provider}-stall`, p.scenario.stall);
          const started = await ctx()
            .http.post('/v1/responses')
            .set(ctx().auth)
            .send({ model: `${p.provider}-stall`, input: 'hi', background: true });
          assert.equal(started.status, 200, started.text);
          const id = started.body.id;
          // Cancel once some text has streamed and the provider is holding the stream open.
          for (let i = 0; !(await journal(id)).some((e) => e.type === 'text.delta'); i++) {
            assert.ok(i < 200, 'no text streamed within 10 s');
            await sleep(50);
          }
          const [sent] = p.requestsFor(p.scenario.stall).slice(-1);
          const res = await ctx().http.post(`/v1/responses/${id}/cancel`).set(ctx().auth);
          assertMatchesSpec(res, 'cancelResponse');
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.palai_status, 'canceled');
          await within(sent.closed, 5_000, 'closing the provider connection');
          assert.equal(sent.finished, false);
          const final = await getResponse(id);
          assert.equal(final.palai_status, 'canceled');
          assert.equal(final.output[0].status, 'incomplete');
        });
      });
    }

    test('switching an agent between providers by its model block alone keeps it answering', async () => {
      const { http, auth } = ctx();
      await createAgent(ctx, { name: 'switcher', model: { provider: 'fake' } });
      const steps: { model: Record<string, unknown>; text: string }[] = [
        { model: { provider: 'fake' }, text: 'echo me' },
        { model: { provider: 'openai-chat', name: 'scenario-text', base_url: openai.baseUrl }, text: 'Paris is the capital of France.' },
        { model: { provider: 'anthropic', name: 'text', base_url: anthropic.baseUrl }, text: 'Hello! How can I help you today?' },
        { model: { provider: 'openai', name: 'scenario-text', base_url: openai.baseUrl }, text: 'Paris is the capital of France.' },
      ];
      for (const [index, step] of steps.entries()) {
        if (index > 0) {
          const updated = await http.post('/v1/agents/switcher').set(auth).send({ model: step.model });
          assertMatchesSpec(updated, 'updateAgent');
          assert.equal(updated.status, 200, updated.text);
          assert.equal(updated.body.revision, index + 1);
        }
        const res = await respond(ctx, { model: 'switcher', input: 'echo me' });
        assert.equal(res.status, 'completed', `${step.model.provider}: ${JSON.stringify(res.error)}`);
        assert.equal(res.output_text, step.text, String(step.model.provider));
      }
    });

    test('a model that streams U+0000 gets U+FFFD in its text instead of failing the run (PostgreSQL cannot store NUL)', async () => {
      await createAgent(ctx, { name: 'nul-talker', model: { provider: 'openai-chat', name: 'scenario-nul-text', base_url: openai.baseUrl } });
      const res = await respond(ctx, { model: 'nul-talker', input: 'hi' });
      assert.equal(res.status, 'completed', JSON.stringify(res.error));
      assert.equal(res.output_text, 'before\ufffdafter');
      const events = await journal(res.id);
      const deltas = events
        .filter((e) => e.type === 'text.delta')
        .map((e) => e.data.delta)
        .join('');
      assert.equal(deltas, 'before\ufffdafter', 'the journal holds the same text');
    });
  },
  { openaiBaseUrl: openai.baseUrl, anthropicBaseUrl: anthropic.baseUrl },
  { env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY } },
);

/** The conversation a request carried: Responses `input`, or Chat and Messages `messages`. */
function conversationSent(body: any): unknown[] {
  return body.input ?? body.messages;
}

/** The tool names a request offered the model, in the provider's format. */
function toolNamesSent(p: ProviderCase, body: any): string[] {
  return (body.tools as any[]).map((tool) => (p.provider === 'openai-chat' ? tool.function.name : tool.name));
}
