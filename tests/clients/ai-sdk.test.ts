// The AI SDK (`ai` 7 with `@ai-sdk/openai` 4) as a Palai client, through both of
// its OpenAI models: `openai.responses(…)` and `openai.chat(…)`. The SDK runs
// the tool loop itself (stateless: it sends the whole history back each step).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { createOpenAI, type OpenAIProvider } from '@ai-sdk/openai';
import { APICallError, generateText, Output, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { until } from '../support/until.js';
import { cityAnswer, describeClient, fakeAgent, journalStatuses, slowScript, weatherScript, weatherTool } from './client-hub.js';

const weather = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async (input) => JSON.parse(weatherTool(input)) as { city: string; sky: string },
});

await describeClient('AI SDK', (ctx) => {
  let openai: OpenAIProvider;
  before(() => {
    openai = createOpenAI({ baseURL: ctx().baseURL, apiKey: ctx().apiKey });
  });

  for (const api of ['responses', 'chat'] as const) {
    describe(`openai.${api}(model)`, () => {
      const model = (name: string) => openai[api](name);

      test('text: generateText', async () => {
        const { text, finishReason } = await generateText({ model: model(await fakeAgent(ctx)), prompt: 'hello ai sdk', maxRetries: 0 });
        assert.equal(text, 'hello ai sdk');
        assert.equal(finishReason, 'stop');
      });

      test('streaming: streamText gives the deltas', async () => {
        const result = streamText({ model: model(await fakeAgent(ctx)), prompt: 'one two three', maxRetries: 0 });
        const deltas: string[] = [];
        for await (const delta of result.textStream) deltas.push(delta);
        assert.deepEqual(deltas, ['one', ' two', ' three']);
        assert.equal(await result.text, 'one two three');
      });

      test('a tool round trip the SDK runs: generateText with tools and stopWhen, and streamText', async () => {
        const result = await generateText({
          model: model(await fakeAgent(ctx, weatherScript())),
          prompt: 'weather in Oslo?',
          tools: { get_weather: weather },
          stopWhen: stepCountIs(3),
          maxRetries: 0,
        });
        assert.equal(result.text, 'It is sunny in Oslo');
        assert.equal(result.steps.length, 2, JSON.stringify(result.steps.map((step) => step.finishReason)));
        assert.deepEqual(
          result.steps[0].toolResults.map((r) => r.output),
          [{ city: 'Oslo', sky: 'clear' }],
        );
        const streamed = streamText({
          model: model(await fakeAgent(ctx, weatherScript('Streamed sunshine'))),
          prompt: 'weather in Oslo?',
          tools: { get_weather: weather },
          stopWhen: stepCountIs(3),
          maxRetries: 0,
        });
        assert.equal(await streamed.text, 'Streamed sunshine');
      });

      test('structured output: generateText with Output.object and a zod schema', async () => {
        const { output } = await generateText({
          model: model(await fakeAgent(ctx, [{ json: cityAnswer }])),
          prompt: 'which city?',
          output: Output.object({ schema: z.object({ city: z.string(), population: z.number() }) }),
          maxRetries: 0,
        });
        assert.deepEqual(output, cityAnswer);
      });

      test('multi-turn: the messages of earlier turns reach the model', async () => {
        const name = await fakeAgent(ctx);
        const first = await generateText({ model: model(name), prompt: 'my name is Ada', maxRetries: 0 });
        const second = await generateText({
          model: model(name),
          messages: [{ role: 'user', content: 'my name is Ada' }, ...first.response.messages, { role: 'user', content: 'what is my name' }],
          maxRetries: 0,
        });
        assert.equal(second.text, 'what is my name');
        assert.equal(second.usage.inputTokens, 12, 'every message of the history reached the model');
      });

      if (api === 'responses') {
        test('multi-turn: previousResponseId continues the stored conversation', async () => {
          const name = await fakeAgent(ctx);
          const first = await generateText({ model: model(name), prompt: 'my name is Ada', maxRetries: 0 });
          const second = await generateText({
            model: model(name),
            prompt: 'what is my name',
            providerOptions: { openai: { previousResponseId: first.response.id } },
            maxRetries: 0,
          });
          assert.equal(second.text, 'what is my name');
          assert.equal(second.usage.inputTokens, 12, 'the model saw the first turn too');
        });
      }

      test('an aborted stream (abortSignal: the client went away) cancels its run, journaled', async () => {
        const name = await fakeAgent(ctx, slowScript());
        const controller = new AbortController();
        const result = streamText({ model: model(name), prompt: 'talk to me', abortSignal: controller.signal, maxRetries: 0 });
        const deltas: string[] = [];
        await assert.rejects(async () => {
          for await (const delta of result.textStream) {
            deltas.push(delta);
            controller.abort();
          }
          throw new Error('the stream ended without the abort');
        }, /abort/i);
        // The SDK may hand over a delta or two it had already read before the abort reaches its stream;
        // what matters is that the stream was cut long before the run's hundred words.
        assert.ok(deltas.length >= 1 && deltas.length < 50, `${deltas.length} deltas`);
        const { hub } = ctx();
        const [response] = (await hub.hub.api.responses.list(hub.projectId, { agent: name }, {})).data;
        const final = await until('the run ends', async () => {
          const state = await hub.hub.api.responses.get(hub.projectId, response.id);
          return state.status !== 'in_progress' && state.status !== 'queued' && state;
        });
        assert.equal(final.status, 'canceled');
        assert.ok((await journalStatuses(ctx, response.id)).includes('canceled'), 'the cancel is journaled');
      });

      test('a readable error: an unknown agent is an APICallError naming it', async () => {
        await assert.rejects(generateText({ model: model('no-such-agent'), prompt: 'x', maxRetries: 0 }), (error: unknown) => {
          assert.ok(APICallError.isInstance(error), String(error));
          assert.equal(error.statusCode, 404);
          assert.match(error.message, /no-such-agent/);
          return true;
        });
      });
    });
  }
});
