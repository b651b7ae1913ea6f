// JSON Schemas as the clients' helpers write them: draft-07 from zod and the
// openai SDK's zod helpers, and draft-04, draft-06, 2019-09, 2020-12 (and no
// `$schema`), each read under its own draft wherever a caller's schema goes —
// a run's text.format, a chat's response_format, a request's and an agent's
// function parameters. A schema no draft's compiler takes is a 400 naming the
// field, before anything is written; never a run that fails on it later.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { zodFunction, zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { openAiClientFor } from '../support/openai-client.js';
import { assertProblem } from '../support/spec.js';
import { startFixtureHttpServer, type FixtureHttpServer } from '../mcp/client-fixture-server.js';
import { ranCalls, toolResult, toolResults } from '../support/tool-results.js';

const DRAFT_04 = 'http://json-schema.org/draft-04/schema#';
const DRAFT_06 = 'http://json-schema.org/draft-06/schema#';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
const DRAFT_2019 = 'https://json-schema.org/draft/2019-09/schema';
const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * Per draft, a schema using what only that draft (or its family) means, and an
 * answer that satisfies it and one that does not under that reading.
 */
const BY_DRAFT: Array<{ draft: string; schema: Record<string, unknown>; good: unknown; bad: unknown }> = [
  {
    // Draft-04's boolean exclusiveMaximum (a number from draft-06 on): 3 is out.
    draft: 'draft-04',
    schema: { $schema: DRAFT_04, type: 'object', properties: { n: { type: 'number', maximum: 3, exclusiveMaximum: true } }, required: ['n'] },
    good: { n: 2 },
    bad: { n: 3 },
  },
  {
    draft: 'draft-06',
    schema: {
      $schema: DRAFT_06,
      type: 'object',
      properties: { n: { type: 'number', exclusiveMinimum: 0 }, kind: { const: 'count' } },
      required: ['n', 'kind'],
    },
    good: { n: 1, kind: 'count' },
    bad: { n: 0, kind: 'count' },
  },
  {
    // Draft-07's tuple `items` (an array), which 2020-12 spells prefixItems, and its definitions.
    draft: 'draft-07',
    schema: {
      $schema: DRAFT_07,
      type: 'object',
      definitions: { label: { type: 'string', minLength: 1 } },
      properties: { pair: { type: 'array', items: [{ $ref: '#/definitions/label' }, { type: 'number' }], additionalItems: false } },
      required: ['pair'],
    },
    good: { pair: ['a', 1] },
    bad: { pair: [1, 'a'] },
  },
  {
    draft: '2019-09',
    schema: { $schema: DRAFT_2019, type: 'object', properties: { card: { type: 'string' } }, dependentRequired: { card: ['billing'] } },
    good: { card: 'x', billing: 'y' },
    bad: { card: 'x' },
  },
  {
    draft: '2020-12',
    schema: {
      $schema: DRAFT_2020,
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false } },
    },
    good: { pair: ['a', 1] },
    bad: { pair: ['a', 1, 2] },
  },
  {
    // No $schema: read as 2020-12, as before.
    draft: 'none',
    schema: { type: 'object', properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }] } }, required: ['pair'] },
    good: { pair: ['a'] },
    bad: { pair: [1] },
  },
];

/** Schemas no draft's compiler takes, and what the error says. */
const UNUSABLE: Array<[name: string, schema: unknown, detail: RegExp]> = [
  ['an unknown $schema', { $schema: 'https://example.com/my-own-draft', type: 'object' }, /\$schema .*my-own-draft/],
  ['an unknown type', { type: 'nope' }, /not a usable JSON Schema \(2020-12\)/],
  ['a $ref to nowhere', { $schema: DRAFT_07, type: 'object', properties: { a: { $ref: '#/definitions/nowhere' } } }, /can't resolve reference/],
  ['a draft-04 schema under 2020-12', { $schema: DRAFT_2020, type: 'object', properties: { n: { maximum: 3, exclusiveMaximum: true } } }, /exclusiveMaximum/],
];

const City = z.object({ city: z.string(), population: z.number().int().min(0) });

await describeEachStore('JSON Schema drafts', (ctx) => {
  const sdk = openAiClientFor(ctx);
  let client: OpenAI;
  const responseCount = async () =>
    (await ctx().hub.kernel.db.query<{ n: number }>('SELECT count(*)::integer AS n FROM responses WHERE project_id = $1', [ctx().projectId])).rows[0].n;

  let mcp: FixtureHttpServer;

  before(async () => {
    client = sdk();
    await createAgent(ctx, { name: 'drafts-echo', model: { provider: 'fake' } });
    await createAgent(ctx, { name: 'drafts-city', model: { provider: 'fake', script: [{ json: { city: 'Oslo', population: 709000 } }] } });
    mcp = await startFixtureHttpServer();
    // A remote server's tool whose input schema is draft-04 (a boolean exclusiveMaximum, which 2020-12 does not take).
    mcp.state.extraTools.push({ name: 'bounded', inputSchema: BY_DRAFT[0].schema as { type: 'object' }, annotations: { readOnlyHint: true } });
    const res = await ctx().http.post('/v1/mcp_servers').set(ctx().auth).send({ name: 'drafts', url: mcp.url });
    assert.equal(res.status, 201, res.text);
  });
  after(() => mcp.close());

  for (const { draft, schema, good, bad } of BY_DRAFT) {
    test(`text.format json_schema in ${draft}: an answer that satisfies it under ${draft} completes, one that does not fails as output-invalid`, async () => {
      const format = { type: 'json_schema' as const, name: 'answer', schema, strict: false };
      await createAgent(ctx, { name: `drafts-good-${draft}`, model: { provider: 'fake', script: [{ json: good }] } });
      const passed = await client.responses.create({ model: `drafts-good-${draft}`, input: 'answer', text: { format } });
      assert.equal(passed.status, 'completed', JSON.stringify(passed.error));
      assert.deepEqual(JSON.parse(passed.output_text), good);
      assert.deepEqual(passed.text?.format, format, 'echoed as sent, $schema and all');
      await createAgent(ctx, { name: `drafts-bad-${draft}`, model: { provider: 'fake', script: [{ json: bad }, { json: bad }] } });
      const failed = await client.responses.create({ model: `drafts-bad-${draft}`, input: 'answer', text: { format } });
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error?.code, 'output-invalid', 'the answer was checked under the draft and repaired once, as any output contract');
    });
  }

  test("zod 4's draft-7 JSON Schema and the openai SDK's zodTextFormat are the run's output contract", async () => {
    const jsonSchema = z.toJSONSchema(City, { target: 'draft-7' });
    assert.equal(jsonSchema.$schema, DRAFT_07);
    const plain = await client.responses.create({
      model: 'drafts-city',
      input: 'which city?',
      text: { format: { type: 'json_schema', name: 'city', schema: jsonSchema, strict: true } },
    });
    assert.equal(plain.status, 'completed', JSON.stringify(plain.error));
    assert.deepEqual(JSON.parse(plain.output_text), { city: 'Oslo', population: 709000 });
    const format = zodTextFormat(City, 'city');
    assert.equal(format.schema.$schema, DRAFT_07, 'the helper sends draft-07');
    const parsed = await client.responses.parse({ model: 'drafts-city', input: 'which city?', text: { format } });
    assert.equal(parsed.status, 'completed', JSON.stringify(parsed.error));
    assert.deepEqual(parsed.output_parsed, { city: 'Oslo', population: 709000 }, 'parsed by the helper, through zod');
    await createAgent(ctx, {
      name: 'drafts-city-wrong',
      model: { provider: 'fake', script: [{ json: { city: 'Oslo', population: -1 } }, { json: { city: 7 } }] },
    });
    const failed = await client.responses.create({ model: 'drafts-city-wrong', input: 'which city?', text: { format } });
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.code, 'output-invalid');
    assert.match(failed.error?.message ?? '', /population|city/, 'names what the draft-07 schema refused');
  });

  test("chat.completions takes zodResponseFormat's draft-07 response_format, and a draft-07 answer that fails it is output-invalid", async () => {
    const response_format = zodResponseFormat(City, 'city');
    const parsed = await client.chat.completions.parse({ model: 'drafts-city', messages: [{ role: 'user', content: 'which city?' }], response_format });
    assert.deepEqual(parsed.choices[0].message.parsed, { city: 'Oslo', population: 709000 });
    await assert.rejects(
      client.chat.completions.create({ model: 'drafts-city-wrong', messages: [{ role: 'user', content: 'which city?' }], response_format }),
      (error: unknown) => error instanceof OpenAI.APIError && error.code === 'output-invalid' && /text\.format: .*(city|population)/.test(error.message),
    );
  });

  test('draft-07 function parameters (zodFunction) on a request and on an agent: strict arguments are checked under draft-07', async () => {
    const weather = zodFunction({ name: 'get_weather', parameters: z.object({ city: z.string(), days: z.number().int().min(1) }) });
    assert.equal((weather.function.parameters as Record<string, unknown>).$schema, DRAFT_07);
    const tool = { type: 'function' as const, name: 'get_weather', parameters: weather.function.parameters!, strict: true };
    // Arguments that fit: the run waits for the caller's output.
    await createAgent(ctx, {
      name: 'drafts-caller',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo', days: 2 } }] }, { text: 'sunny' }] },
    });
    const waiting = await client.responses.create({ model: 'drafts-caller', input: 'weather?', tools: [tool] });
    assert.equal((waiting as unknown as { palai_status: string }).palai_status, 'waiting_for_tool');
    const call = waiting.output.find((item) => item.type === 'function_call');
    assert.ok(call && call.type === 'function_call', JSON.stringify(waiting.output));
    const done = await client.responses.create({
      model: 'drafts-caller',
      previous_response_id: waiting.id,
      tools: [tool],
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'clear' }],
    });
    assert.equal(done.output_text, 'sunny');
    // Arguments the draft-07 schema refuses (days below its minimum): the model is told, and the run goes on without waiting.
    await createAgent(ctx, {
      name: 'drafts-own-tool',
      tools: [{ type: 'function', name: 'get_weather', parameters: weather.function.parameters, strict: true }],
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo', days: 0 } }] }, { text: 'gave up' }] },
    });
    const refused = await client.responses.create({ model: 'drafts-own-tool', input: 'weather?' });
    assert.equal(refused.status, 'completed');
    assert.equal((refused as unknown as { palai_status: string }).palai_status, 'completed');
    assert.equal(refused.output_text, 'gave up');
    const run = (await ctx().http.get(`/v1/responses/${refused.id}`).set(ctx().auth)).body;
    const output = toolResult(run.output)!;
    assert.match(output.output, /Invalid arguments: \/days must be >= 1/);
    // The chat endpoint offers the same draft-07 function.
    const chat = await client.chat.completions.create({ model: 'drafts-caller', messages: [{ role: 'user', content: 'weather?' }], tools: [weather] });
    assert.equal(chat.choices[0].finish_reason, 'tool_calls');
    assert.equal(chat.choices[0].message.tool_calls?.[0].type === 'function' && chat.choices[0].message.tool_calls[0].function.name, 'get_weather');
  });

  test('an unusable schema is a 400 naming its field, in text.format, response_format and function parameters, and nothing is written', async () => {
    const { http, auth } = ctx();
    const before = await responseCount();
    for (const [name, schema, detail] of UNUSABLE) {
      const cases: Array<[path: string, body: Record<string, unknown>, pointer: string]> = [
        ['/v1/responses', { model: 'drafts-echo', input: 'x', text: { format: { type: 'json_schema', name: 'x', schema } } }, '/text/format/schema'],
        ['/v1/responses', { model: 'drafts-echo', input: 'x', tools: [{ type: 'function', name: 'f', parameters: schema }] }, '/tools/0/parameters'],
        [
          '/v1/chat/completions',
          { model: 'drafts-echo', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } },
          '/response_format/json_schema/schema',
        ],
        [
          '/v1/chat/completions',
          { model: 'drafts-echo', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f', parameters: schema } }] },
          '/tools/0/function/parameters',
        ],
        ['/v1/agents', { name: 'drafts-unusable', model: { provider: 'fake' }, output_schema: schema }, '/output_schema'],
        [
          '/v1/agents',
          { name: 'drafts-unusable', model: { provider: 'fake' }, tools: [{ type: 'function', name: 'f', parameters: schema }] },
          '/tools/0/parameters',
        ],
      ];
      for (const [path, body, pointer] of cases) {
        const res = await http.post(path).set(auth).send(body);
        assertProblem(res, 400, 'validation-failed');
        assert.deepEqual(
          res.body.errors.map((e: { pointer: string }) => e.pointer),
          [pointer],
          `${name} at ${path}: ${res.text}`,
        );
        assert.match(res.body.errors[0].detail, detail, `${name} at ${path}`);
      }
    }
    // Not an object at all: the document's own shape check names the same fields.
    const notObject = await http
      .post('/v1/responses')
      .set(auth)
      .send({ model: 'drafts-echo', input: 'x', text: { format: { type: 'json_schema', name: 'x', schema: 'a string' } } });
    assertProblem(notObject, 400, 'validation-failed');
    assert.ok(
      notObject.body.errors.some((e: { pointer: string }) => e.pointer === '/text/format/schema'),
      notObject.text,
    );
    const notObjectChat = await http
      .post('/v1/chat/completions')
      .set(auth)
      .send({
        model: 'drafts-echo',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: [] } },
      });
    assertProblem(notObjectChat, 400, 'validation-failed');
    assert.ok(
      notObjectChat.body.errors.some((e: { pointer: string }) => e.pointer === '/response_format/json_schema/schema'),
      notObjectChat.text,
    );
    assert.equal(await responseCount(), before, 'no response was admitted');
    assert.equal((await http.get('/v1/agents/drafts-unusable').set(auth)).status, 404, 'no agent was created');
  });

  test('the SDK reads the refusal as a BadRequestError naming the parameter', async () => {
    const schema = { $schema: 'http://json-schema.org/draft-99/schema#', type: 'object' };
    await assert.rejects(
      client.responses.create({ model: 'drafts-echo', input: 'x', text: { format: { type: 'json_schema', name: 'x', schema } } }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, String(error));
        assert.equal(error.code, 'validation-failed');
        assert.equal(error.param, 'text.format.schema');
        return true;
      },
    );
    await assert.rejects(
      client.chat.completions.create({
        model: 'drafts-echo',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
      }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === 'response_format.json_schema.schema',
    );
  });

  test("an MCP server's draft-04 input schema checks arguments under draft-04: a call it refuses never reaches the server", async () => {
    await createAgent(ctx, {
      name: 'drafts-mcp',
      tools: [{ type: 'mcp', server_label: 'drafts' }],
      model: {
        provider: 'fake',
        script: [
          { tool_calls: [{ name: 'mcp__drafts__bounded', arguments: { n: 2 } }] },
          { tool_calls: [{ name: 'mcp__drafts__bounded', arguments: { n: 3 } }] },
          { text: 'done' },
        ],
      },
    });
    const state = await client.responses.create({ model: 'drafts-mcp', input: 'go' });
    assert.equal(state.status, 'completed', JSON.stringify(state.error));
    const outputs = toolResults(state.output).map((item) => String(item.output));
    assert.equal(outputs[0], 'extra: bounded');
    assert.match(outputs[1], /Invalid arguments: \/n must be < 3/);
    assert.deepEqual(
      mcp.state.calls.filter((call) => call.tool === 'bounded').map((call) => call.args),
      [{ n: 2 }],
      'only the call the schema allows was made',
    );
  });
});
