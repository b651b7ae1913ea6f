// The OpenAI Agents SDK for JS (`@openai/agents`) as a Palai client, through
// the Responses API and through Chat Completions. Its runner runs the tool loop
// itself; tracing is off (its exporter would call OpenAI).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { cityAnswer, describeClient, fakeAgent, weatherScript, weatherTool } from './client-hub.js';

setTracingDisabled(true);

const getWeather = tool({
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async (input) => weatherTool(input),
});

await describeClient('OpenAI Agents SDK', (ctx) => {
  before(() => {
    setDefaultOpenAIClient(new OpenAI({ baseURL: ctx().baseURL, apiKey: ctx().apiKey, maxRetries: 0 }));
  });

  for (const api of ['responses', 'chat_completions'] as const) {
    describe(`setOpenAIAPI('${api}')`, () => {
      before(() => setOpenAIAPI(api));
      const agent = async (options: { script?: Parameters<typeof fakeAgent>[1]; tools?: boolean } = {}) =>
        new Agent({ name: 'Assistant', model: await fakeAgent(ctx, options.script), tools: options.tools ? [getWeather] : [] });

      test('text: run gives the final output', async () => {
        const result = await run(await agent(), 'hello agents');
        assert.equal(result.finalOutput, 'hello agents');
      });

      test('streaming: run with stream: true gives the text as it comes', async () => {
        const result = await run(await agent(), 'one two three', { stream: true });
        const deltas: string[] = [];
        for await (const delta of result.toTextStream()) deltas.push(delta);
        await result.completed;
        assert.deepEqual(deltas, ['one', ' two', ' three']);
        assert.equal(result.finalOutput, 'one two three');
      });

      test('a tool round trip the runner runs: a zod-parameters tool, then the answer, streamed too', async () => {
        const result = await run(await agent({ script: weatherScript(), tools: true }), 'weather in Oslo?');
        assert.equal(result.finalOutput, 'It is sunny in Oslo');
        const outputs = result.newItems.flatMap((item) => (item.type === 'tool_call_output_item' ? [item.output] : []));
        assert.deepEqual(outputs, [weatherTool({ city: 'Oslo' })]);
        const streamed = await run(await agent({ script: weatherScript('Streamed sunshine'), tools: true }), 'weather in Oslo?', { stream: true });
        for await (const event of streamed) void event;
        await streamed.completed;
        assert.equal(streamed.finalOutput, 'Streamed sunshine');
      });

      test('structured output: a zod outputType', async () => {
        const typed = new Agent({
          name: 'Typed',
          model: await fakeAgent(ctx, [{ json: cityAnswer }]),
          outputType: z.object({ city: z.string(), population: z.number() }),
        });
        const result = await run(typed, 'which city?');
        assert.deepEqual(result.finalOutput, cityAnswer);
      });

      test('multi-turn: the history of the first run, with a new message', async () => {
        const assistant = await agent();
        const first = await run(assistant, 'my name is Ada');
        const second = await run(assistant, [...first.history, { role: 'user', content: 'what is my name' }]);
        assert.equal(second.finalOutput, 'what is my name');
        assert.equal(second.rawResponses[0].usage.inputTokens, 12, 'every message of the history reached the model');
      });

      test('a readable error: an unknown agent fails the run with the API error naming it', async () => {
        const missing = new Agent({ name: 'Missing', model: 'no-such-agent' });
        await assert.rejects(run(missing, 'x'), (error: unknown) => {
          assert.ok(error instanceof OpenAI.NotFoundError, String(error));
          assert.match(error.message, /no-such-agent/);
          return true;
        });
      });
    });
  }
});
