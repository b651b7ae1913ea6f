// LangChain JS (`@langchain/openai` ChatOpenAI) as a Palai client, over Chat
// Completions and, with `useResponsesApi: true`, the Responses API. LangChain
// has no tool loop of its own in ChatOpenAI: the test runs it as a LangChain
// app does (invoke, run the tool, invoke again with the ToolMessage).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { cityAnswer, describeClient, fakeAgent, weatherScript, weatherTool } from './client-hub.js';

const getWeather = tool(async (input: { city: string }) => weatherTool(input), {
  name: 'get_weather',
  description: 'The weather in a city',
  schema: z.object({ city: z.string() }),
});

await describeClient('LangChain ChatOpenAI', (ctx) => {
  for (const useResponsesApi of [false, true]) {
    describe(useResponsesApi ? 'useResponsesApi: true' : 'Chat Completions', () => {
      const chat = (model: string) =>
        new ChatOpenAI({ model, apiKey: ctx().apiKey, configuration: { baseURL: ctx().baseURL }, useResponsesApi, maxRetries: 0 });

      test('text: invoke', async () => {
        const message = await chat(await fakeAgent(ctx)).invoke('hello langchain');
        assert.equal(message.text, 'hello langchain');
      });

      test('streaming: stream gives the chunks', async () => {
        const chunks: string[] = [];
        for await (const chunk of await chat(await fakeAgent(ctx)).stream('one two three')) if (chunk.text) chunks.push(chunk.text);
        assert.deepEqual(chunks, ['one', ' two', ' three']);
      });

      test('a tool round trip: bindTools, the tool run, its ToolMessage sent back', async () => {
        const model = chat(await fakeAgent(ctx, weatherScript())).bindTools([getWeather]);
        const messages: BaseMessage[] = [new HumanMessage('weather in Oslo?')];
        const first = await model.invoke(messages);
        assert.deepEqual(
          first.tool_calls?.map((call) => [call.name, call.args]),
          [['get_weather', { city: 'Oslo' }]],
        );
        messages.push(first, await getWeather.invoke(first.tool_calls![0]));
        const second = await model.invoke(messages);
        assert.equal(second.text, 'It is sunny in Oslo');
      });

      test('structured output: withStructuredOutput with a zod schema', async () => {
        const structured = chat(await fakeAgent(ctx, [{ json: cityAnswer }])).withStructuredOutput(z.object({ city: z.string(), population: z.number() }));
        assert.deepEqual(await structured.invoke('which city?'), cityAnswer);
      });

      test('multi-turn: the messages of earlier turns reach the model', async () => {
        const model = chat(await fakeAgent(ctx));
        const messages: BaseMessage[] = [new HumanMessage('my name is Ada')];
        messages.push(await model.invoke(messages), new HumanMessage('what is my name'));
        const second = await model.invoke(messages);
        assert.equal(second.text, 'what is my name');
        assert.equal(second.usage_metadata?.input_tokens, 12, 'every message of the history reached the model');
      });

      test('a readable error: an unknown agent rejects naming it', async () => {
        await assert.rejects(chat('no-such-agent').invoke('x'), (error: unknown) => {
          assert.ok(error instanceof Error);
          assert.match(error.message, /no-such-agent/);
          assert.equal((error as { status?: number }).status, 404);
          return true;
        });
      });
    });
  }
});
