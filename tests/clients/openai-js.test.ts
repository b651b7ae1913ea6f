// The `openai` JS SDK (7.x) as a Palai client: text, the Responses stream
// helper, a tool loop the SDK runs itself (runTools), structured output parsed
// with zod, multi-turn, and an error it can read.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import OpenAI from 'openai';
import { zodFunction, zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { until } from '../support/until.js';
import { cityAnswer, describeClient, fakeAgent, journalStatuses, slowScript, weatherScript, weatherTool, type ClientHub } from './client-hub.js';

/** Streams a response, leaves after its first delta, and returns how the run ended. */
async function leaveAfterFirstDelta(ctx: () => ClientHub, client: OpenAI, background: boolean) {
  const stream = await client.responses.create({ model: await fakeAgent(ctx, slowScript()), input: 'talk to me', stream: true, background });
  let id = '';
  for await (const event of stream) {
    if (event.type === 'response.created') id = event.response.id;
    if (event.type === 'response.output_text.delta') break; // the SDK aborts the request
  }
  const { hub } = ctx();
  return until('the run ends', async () => {
    const state = await hub.hub.api.responses.get(hub.projectId, id);
    return state.status !== 'in_progress' && state.status !== 'queued' && state;
  });
}

await describeClient('openai JS SDK', (ctx) => {
  let client: OpenAI;
  before(() => {
    client = new OpenAI({ apiKey: ctx().apiKey, baseURL: ctx().baseURL, maxRetries: 0 });
  });

  test('text: responses.create and chat.completions.create', async () => {
    const model = await fakeAgent(ctx);
    const response = await client.responses.create({ model, input: 'hello there' });
    assert.equal(response.output_text, 'hello there');
    const chat = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello chat' }] });
    assert.equal(chat.choices[0].message.content, 'hello chat');
  });

  test('streaming: responses.stream gives each delta, then the final response', async () => {
    const model = await fakeAgent(ctx);
    const stream = client.responses.stream({ model, input: 'one two three' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    assert.deepEqual(deltas, ['one', ' two', ' three']);
    assert.equal(final.output_text, 'one two three');
    assert.equal(final.status, 'completed');
  });

  test('a tool round trip the SDK runs: chat.completions.runTools with a zodFunction, plain and streamed', async () => {
    const tools = [zodFunction({ name: 'get_weather', parameters: z.object({ city: z.string() }), function: weatherTool })];
    const calls: string[] = [];
    const runner = client.chat.completions.runTools({
      model: await fakeAgent(ctx, weatherScript()),
      messages: [{ role: 'user', content: 'weather in Oslo?' }],
      tools,
    });
    runner.on('functionToolCallResult', (result) => calls.push(result));
    assert.equal(await runner.finalContent(), 'It is sunny in Oslo');
    assert.deepEqual(calls, [weatherTool({ city: 'Oslo' })]);
    const streamed = client.chat.completions.runTools({
      model: await fakeAgent(ctx, weatherScript('Streamed sunshine')),
      messages: [{ role: 'user', content: 'weather in Oslo?' }],
      tools,
      stream: true,
    });
    assert.equal(await streamed.finalContent(), 'Streamed sunshine');
  });

  test('a tool round trip over the Responses API: the function_call answered with previous_response_id', async () => {
    const model = await fakeAgent(ctx, weatherScript());
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } },
    ];
    const first = await client.responses.create({ model, input: 'weather in Oslo?', tools });
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call?.type === 'function_call', JSON.stringify(first.output));
    const output = weatherTool(JSON.parse(call.arguments));
    const final = await client.responses
      .stream({ model, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output }] })
      .finalResponse();
    assert.equal(final.output_text, 'It is sunny in Oslo');
  });

  test('structured output: responses.parse with zodTextFormat, and chat.completions.parse with zodResponseFormat', async () => {
    const City = z.object({ city: z.string(), population: z.number() });
    const model = await fakeAgent(ctx, [{ json: cityAnswer }, { json: cityAnswer }]);
    const parsed = await client.responses.parse({ model, input: 'which city?', text: { format: zodTextFormat(City, 'city') } });
    assert.equal(parsed.status, 'completed', JSON.stringify(parsed.error));
    assert.deepEqual(parsed.output_parsed, cityAnswer);
    const chat = await client.chat.completions.parse({
      model: await fakeAgent(ctx, [{ json: cityAnswer }]),
      messages: [{ role: 'user', content: 'which city?' }],
      response_format: zodResponseFormat(City, 'city'),
    });
    assert.deepEqual(chat.choices[0].message.parsed, cityAnswer);
  });

  test('multi-turn: previous_response_id, and a chat history sent back', async () => {
    const model = await fakeAgent(ctx);
    const first = await client.responses.create({ model, input: 'my name is Ada' });
    const second = await client.responses.create({ model, input: 'what is my name', previous_response_id: first.id });
    assert.equal(second.output_text, 'what is my name');
    assert.ok(second.usage!.input_tokens >= first.usage!.input_tokens + 4, `the second turn saw the first: ${JSON.stringify(second.usage)}`);
    const chat = await client.chat.completions.create({
      model,
      messages: [
        { role: 'user', content: 'my name is Ada' },
        { role: 'assistant', content: 'my name is Ada' },
        { role: 'user', content: 'what is my name' },
      ],
    });
    assert.equal(chat.choices[0].message.content, 'what is my name');
    assert.equal(chat.usage?.prompt_tokens, 12, 'every message of the history reached the model');
  });

  test('a streamed response whose client leaves is cancelled, journaled; a background one goes on', async () => {
    const left = await leaveAfterFirstDelta(ctx, client, false);
    assert.equal(left.status, 'canceled');
    assert.ok((await journalStatuses(ctx, left.id)).includes('canceled'));
    assert.equal((await client.responses.retrieve(left.id)).status, 'cancelled');
    const background = await leaveAfterFirstDelta(ctx, client, true);
    assert.equal(background.status, 'completed');
    assert.equal(background.output.length, 1);
  });

  test('a readable error: an unknown agent is the SDK’s NotFoundError naming it, in a stream too', async () => {
    await assert.rejects(client.responses.create({ model: 'no-such-agent', input: 'x' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError, String(error));
      assert.match(error.message, /no-such-agent/);
      return true;
    });
    await assert.rejects(client.responses.stream({ model: 'no-such-agent', input: 'x' }).finalResponse(), OpenAI.NotFoundError);
    const failing = await fakeAgent(ctx, [{ error: { status: 400, message: 'the model refused this' } }]);
    await assert.rejects(client.chat.completions.create({ model: failing, messages: [{ role: 'user', content: 'x' }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError, String(error));
      assert.match(error.message, /the model refused this/);
      return true;
    });
  });
});
