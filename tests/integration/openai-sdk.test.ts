// The official `openai` SDK (7.x) as a Palai client, over real HTTP.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { openAiClientFor } from '../support/openai-client.js';
import { assertMatchesSpec } from '../support/spec.js';

await describeEachStore('OpenAI SDK as a client', (ctx) => {
  const sdk = openAiClientFor(ctx);
  let client: OpenAI;

  before(async () => {
    client = sdk();
    await createAgent(ctx, { name: 'sdk-echo', model: { provider: 'fake' } });
  });

  test('responses.create returns a completed response with output_text', async () => {
    const response = await client.responses.create({ model: 'sdk-echo', input: 'hello from the sdk' });
    assert.equal(response.status, 'completed');
    assert.equal(response.output_text, 'hello from the sdk');
  });

  test('responses.create with stream yields typed events ending in response.completed', async () => {
    const stream = await client.responses.create({ model: 'sdk-echo', input: 'streamed words here', stream: true });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    assert.equal(text, 'streamed words here');
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
  });

  test('responses.stream accumulates the final response', async () => {
    const stream = client.responses.stream({ model: 'sdk-echo', input: 'accumulate me' });
    const final = await stream.finalResponse();
    assert.equal(final.output_text, 'accumulate me');
  });

  test('a background response can be polled with responses.retrieve', async () => {
    const queued = await client.responses.create({ model: 'sdk-echo', input: 'later', background: true });
    assert.equal(queued.status, 'queued');
    let current = queued;
    for (let i = 0; i < 100 && current.status !== 'completed'; i++) {
      await sleep(50);
      current = await client.responses.retrieve(queued.id);
    }
    assert.equal(current.status, 'completed');
    assert.equal(current.output_text, 'later');
  });

  test('previous_response_id continues the conversation', async () => {
    const first = await client.responses.create({ model: 'sdk-echo', input: 'first turn' });
    const second = await client.responses.create({ model: 'sdk-echo', input: 'second turn', previous_response_id: first.id });
    assert.equal(second.previous_response_id, first.id);
    assert.equal(second.output_text, 'second turn');
    // The model saw the first turn too: more input tokens than the second turn alone.
    assert.ok(second.usage!.input_tokens > first.usage!.input_tokens + 1, JSON.stringify(second.usage));
  });

  test('errors surface as the SDK error class with the problem status', async () => {
    await assert.rejects(client.responses.create({ model: 'no-such-agent', input: 'x' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError, String(error));
      assert.match(error.message, /^404 .*no-such-agent/, 'the SDK shows the message, naming the agent');
      assert.equal(error.code, 'agent-not-found');
      assert.equal(error.type, 'not_found_error');
      return true;
    });
    const invalid = { model: 'sdk-echo', input: 42 } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
    await assert.rejects(client.responses.create(invalid), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.code, 'validation-failed');
      assert.equal(error.type, 'invalid_request_error');
      assert.match(String(error.param), /^input/, 'the SDK names the offending parameter');
      assert.doesNotMatch(error.message, /no body/);
      return true;
    });
    const anonymous = new OpenAI({ apiKey: 'palai_sk_wrong_key_value', baseURL: client.baseURL, maxRetries: 0 });
    await assert.rejects(anonymous.responses.create({ model: 'sdk-echo', input: 'x' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.AuthenticationError, String(error));
      assert.equal(error.code, 'unauthorized');
      assert.match(error.message, /API key/);
      return true;
    });
  });

  test('the other error classes: a conflict, an idempotency key reused for another request, a body too large', async () => {
    const first = await client.responses.create({ model: 'sdk-echo', input: 'once' }, { headers: { 'Idempotency-Key': 'sdk-key-1' } });
    const again = await client.responses.create({ model: 'sdk-echo', input: 'once' }, { headers: { 'Idempotency-Key': 'sdk-key-1' } });
    assert.equal(again.id, first.id, 'the same key and request answer with the same response');
    await assert.rejects(client.responses.create({ model: 'sdk-echo', input: 'twice' }, { headers: { 'Idempotency-Key': 'sdk-key-1' } }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.UnprocessableEntityError, String(error));
      assert.equal(error.code, 'idempotency-conflict');
      assert.match(error.message, /Idempotency-Key|idempotency key/i);
      return true;
    });
    await assert.rejects(client.responses.cancel(first.id), (error: unknown) => {
      assert.ok(error instanceof OpenAI.ConflictError, String(error));
      assert.equal(error.code, 'invalid-state');
      assert.match(error.message, new RegExp(first.id));
      return true;
    });
    const huge = 'x'.repeat(ctx().hub.api.config.maxBodyBytes + 1);
    await assert.rejects(client.responses.create({ model: 'sdk-echo', input: huge }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError && error.status === 413, String(error));
      assert.equal(error.code, 'payload-too-large');
      return true;
    });
  });

  test('a function-tool round trip: the call surfaces as a function_call item, its output continues the run', async () => {
    await createAgent(ctx, {
      name: 'sdk-weather',
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, { text: 'It is sunny in Oslo' }] },
    });
    const first = await client.responses.create({ model: 'sdk-weather', input: 'weather in Oslo?' });
    assert.equal(first.status, 'completed', "a response that waits for its caller reads completed, as OpenAI's does");
    assert.equal((first as unknown as { palai_status: string }).palai_status, 'waiting_for_tool');
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call && call.type === 'function_call', JSON.stringify(first.output));
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.arguments), { city: 'Oslo' });
    const second = await client.responses.create({
      model: 'sdk-weather',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"sky":"clear"}' }],
    });
    assert.equal(second.id, first.id, 'the same durable run resumed');
    assert.equal(second.status, 'completed');
    assert.equal(second.output_text, 'It is sunny in Oslo');
    assert.equal((await client.responses.retrieve(first.id)).output_text, 'It is sunny in Oslo');
  });

  test("models.list shows the project's agents as models, and models.retrieve one by name", async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    const echo = models.find((m) => m.id === 'sdk-echo');
    assert.ok(echo, JSON.stringify(models));
    assert.equal(echo.object, 'model');
    assert.equal(echo.owned_by, ctx().projectId);
    assert.equal(typeof echo.created, 'number');
    const one = await client.models.retrieve('sdk-echo');
    assert.deepEqual(one, echo);
    await assert.rejects(client.models.retrieve('no-such-agent'), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError, String(error));
      assert.equal(error.code, 'agent-not-found');
      assert.match(error.message, /no-such-agent/);
      return true;
    });
    const other = new OpenAI({ apiKey: await ctx().newProjectKey(), baseURL: client.baseURL, maxRetries: 0 });
    const theirs = [];
    for await (const model of other.models.list()) theirs.push(model);
    assert.deepEqual(theirs, [], "another project's key sees none of this project's agents");
  });

  test('responses.inputItems.list pages through the input, newest first by default, in order with order=asc', async () => {
    const input = ['one', 'two', 'three'].map((text) => ({ role: 'user' as const, content: text }));
    const response = await client.responses.create({ model: 'sdk-echo', input });
    const texts = (items: { type: string }[]) => items.map((item) => (item as unknown as { content: { text: string }[] }).content[0].text);
    const newest = await client.responses.inputItems.list(response.id);
    assert.deepEqual(texts(newest.data), ['three', 'two', 'one']);
    const ascending = [];
    for await (const item of client.responses.inputItems.list(response.id, { order: 'asc', limit: 1 })) ascending.push(item);
    assert.deepEqual(texts(ascending), ['one', 'two', 'three'], 'the SDK follows the cursor page by page');
    await assert.rejects(client.responses.inputItems.list('resp_does_not_exist'), OpenAI.NotFoundError);
    await assert.rejects(client.responses.inputItems.list(response.id, { after: 'msg_not_one_of_them' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.param, 'after');
      return true;
    });
  });

  test('the models and input-items answers match the OpenAPI document', async () => {
    const { http, auth } = ctx();
    assertMatchesSpec(await http.get('/v1/models').set(auth), 'listModels');
    assertMatchesSpec(await http.get('/v1/models/sdk-echo').set(auth), 'getModel');
    assertMatchesSpec(await http.get('/v1/models/nobody').set(auth), 'getModel');
    const response = await client.responses.create({ model: 'sdk-echo', input: 'conforming' });
    const page = await http.get(`/v1/responses/${response.id}/input_items?order=asc&limit=5`).set(auth);
    assertMatchesSpec(page, 'listResponseInputItems');
    assert.equal(page.status, 200);
    assert.equal(page.body.data.length, 1);
    assertMatchesSpec(await http.get(`/v1/responses/${response.id}/input_items?order=sideways`).set(auth), 'listResponseInputItems');
  });

  test('a run takes temperature, max_output_tokens and user, echoes them, and refuses what it cannot honour by name', async () => {
    const sampled = await client.responses.create({ model: 'sdk-echo', input: 'sampled', top_p: 0.4, parallel_tool_calls: false, tool_choice: 'none' });
    assert.equal(sampled.top_p, 0.4);
    assert.equal(sampled.parallel_tool_calls, false);
    assert.equal(sampled.tool_choice, 'none');
    const tuned = await client.responses.create({ model: 'sdk-echo', input: 'tuned run', temperature: 0.3, max_output_tokens: 77, user: 'end-user-1' });
    assert.equal(tuned.temperature, 0.3);
    assert.equal(tuned.max_output_tokens, 77);
    assert.equal((tuned as unknown as { user: string }).user, 'end-user-1');
    assert.equal((tuned as unknown as { store: boolean }).store, true);
    assert.equal(tuned.truncation, 'disabled');
    const plain = await client.responses.create({ model: 'sdk-echo', input: 'plain run' });
    assert.equal(plain.temperature, null, "null: the agent's own setting applies");
    const accepted = await client.responses.create({
      model: 'sdk-echo',
      input: 'defaults',
      top_p: 1,
      store: true,
      parallel_tool_calls: true,
      truncation: 'disabled',
      tool_choice: 'auto',
      text: { format: { type: 'text' } },
    });
    assert.equal(accepted.status, 'completed');
    const refused: [Record<string, unknown>, string][] = [
      [{ store: false }, 'store'],
      [{ truncation: 'auto' }, 'truncation'],
      // An OpenAI-hosted tool: the first of its faults the schema names is the missing function name.
      [{ tools: [{ type: 'web_search' }] }, 'tools[0].name'],
      [{ tool_choice: { type: 'function', name: 'not_a_tool' } }, 'tool_choice.name'],
      [{ text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format'],
      [{ temperature: 3 }, 'temperature'],
      [{ top_p: 1.5 }, 'top_p'],
    ];
    for (const [extra, param] of refused) {
      const request = { model: 'sdk-echo', input: 'x', ...extra } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
      await assert.rejects(client.responses.create(request), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, `${param}: ${String(error)}`);
        assert.ok(String(error.param).startsWith(param), `${error.param} names ${param}`);
        return true;
      });
    }
  });

  test("a request's function tools are this run's client functions: the call waits for its output, then the run goes on", async () => {
    await createAgent(ctx, {
      name: 'sdk-lookup',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'lookup', arguments: { q: 'palai' } }] }, { text: 'found it' }] },
    });
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false },
    ];
    const first = await client.responses.create({ model: 'sdk-lookup', input: 'look it up', tools });
    assert.deepEqual(
      first.tools.map((t) => (t as { name: string }).name),
      ['lookup'],
      'echoed',
    );
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call && call.type === 'function_call', JSON.stringify(first.output));
    assert.deepEqual(JSON.parse(call.arguments), { q: 'palai' });
    const second = await client.responses.create({
      model: 'sdk-lookup',
      previous_response_id: first.id,
      tools,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'a hub' }],
    });
    assert.equal(second.output_text, 'found it');
    await assert.rejects(
      client.responses.create({ model: 'sdk-weather', input: 'x', tools: [{ type: 'function', name: 'get_weather', parameters: {}, strict: false }] }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === 'tools[0].name' && /agent's own tools/.test(error.message),
    );
  });

  test("text.format json_schema is the run's output contract: a valid answer completes, an invalid one is repaired or fails", async () => {
    await createAgent(ctx, { name: 'sdk-json', model: { provider: 'fake', script: [{ json: { city: 'Oslo' } }] } });
    const format = {
      type: 'json_schema' as const,
      name: 'city',
      schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      strict: true,
    };
    const parsed = await client.responses.parse({ model: 'sdk-json', input: 'which city?', text: { format } });
    assert.deepEqual(parsed.output_parsed, { city: 'Oslo' }, "the SDK's parse helper reads the structured answer");
    assert.deepEqual(parsed.text?.format, format, 'echoed');
    await createAgent(ctx, { name: 'sdk-json-bad', model: { provider: 'fake', script: [{ text: 'not json' }, { text: 'still not json' }] } });
    const failed = await client.responses.create({ model: 'sdk-json-bad', input: 'x', text: { format } });
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.code, 'output-invalid');
    const object = await client.responses.create({ model: 'sdk-json', input: 'x', text: { format: { type: 'json_object' } } });
    assert.equal(object.status, 'completed');
    assert.deepEqual(JSON.parse(object.output_text), { city: 'Oslo' });
  });
});
