// An agent with tools of its own (a built-in here; MCP, HTTP and agent tools alike): Palai runs the call and
// the REST API shows it as OpenAI shows the tools it runs, one `mcp_call` item with its output. Each
// library gets the answer without taking the call for one of its own to run, and a history it resends,
// holding that item (or a reference to it), is understood.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, type ModelMessage } from 'ai';
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from '@openai/agents';
import { ChatOpenAI } from '@langchain/openai';
import OpenAI from 'openai';
import { createAgent } from '../support/api.js';
import { describeClient, type ClientHub } from './client-hub.js';

setTracingDisabled(true);

let agents = 0;
/** An agent that calls its built-in echo tool, then answers; past its script it echoes the last message. */
async function echoingAgent(ctx: () => ClientHub, answer = 'echoed ping'): Promise<string> {
  const name = `palai-tools-${++agents}`;
  await createAgent(() => ctx().hub, {
    name,
    tools: [{ type: 'builtin', name: 'echo' }],
    model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'ping' } }] }, { text: answer }] },
  });
  return name;
}

await describeClient("Palai's own tools through the client libraries", (ctx) => {
  let client: OpenAI;
  before(() => {
    client = new OpenAI({ baseURL: ctx().baseURL, apiKey: ctx().apiKey, maxRetries: 0 });
    setDefaultOpenAIClient(client);
  });

  test('the openai SDK: the call is an mcp_call with its output, in the answer and in the stream', async () => {
    const answer = await client.responses.create({ model: await echoingAgent(ctx), input: 'x' });
    assert.deepEqual(
      answer.output.map((item) => item.type),
      ['mcp_call', 'message'],
    );
    const [call] = answer.output.filter((item) => item.type === 'mcp_call');
    assert.equal(call.server_label, 'palai');
    assert.equal(call.name, 'echo');
    assert.deepEqual(JSON.parse(call.arguments), { text: 'ping' });
    assert.equal(call.output, 'ping');

    const stream = client.responses.stream({ model: await echoingAgent(ctx), input: 'x' });
    const added: string[] = [];
    stream.on('response.output_item.added', (event) => added.push(event.item.type));
    const streamed = await stream.finalResponse();
    assert.deepEqual(added, ['mcp_call', 'message'], 'no function_call or function_call_output item is streamed');
    assert.equal(streamed.output.find((item) => item.type === 'mcp_call')?.output, 'ping');
    assert.equal(streamed.output_text, 'echoed ping');
  });

  test('the AI SDK: generateText and streamText over the Responses API; a resent history refers to the call', async () => {
    const openai = createOpenAI({ baseURL: ctx().baseURL, apiKey: ctx().apiKey });
    const first = await generateText({ model: openai.responses(await echoingAgent(ctx)), prompt: 'x', maxRetries: 0 });
    assert.equal(first.text, 'echoed ping');
    const streamed = streamText({ model: openai.responses(await echoingAgent(ctx, 'streamed ping')), prompt: 'x', maxRetries: 0 });
    assert.equal(await streamed.text, 'streamed ping');

    const name = await echoingAgent(ctx);
    const turn = await generateText({ model: openai.responses(name), prompt: 'ping it', maxRetries: 0 });
    const messages: ModelMessage[] = [{ role: 'user', content: 'ping it' }, ...turn.response.messages, { role: 'user', content: 'and again' }];
    const next = await generateText({ model: openai.responses(name), messages, maxRetries: 0 });
    assert.equal(next.text, 'and again', 'past its script the agent echoes: the history was read');
  });

  test('the Agents SDK: the call is not one of its tools to run; a second run over the history goes on', async () => {
    setOpenAIAPI('responses');
    const agent = new Agent({ name: 'Assistant', model: await echoingAgent(ctx) });
    const result = await run(agent, 'x');
    assert.equal(result.finalOutput, 'echoed ping');
    const streamed = await run(new Agent({ name: 'Assistant', model: await echoingAgent(ctx, 'streamed ping') }), 'x', { stream: true });
    for await (const event of streamed) void event;
    await streamed.completed;
    assert.equal(streamed.finalOutput, 'streamed ping');

    const again = await run(agent, [...result.history, { role: 'user', content: 'once more' }]);
    assert.equal(again.finalOutput, 'once more');
  });

  test('LangChain with the Responses API', async () => {
    const model = new ChatOpenAI({ model: await echoingAgent(ctx), apiKey: ctx().apiKey, configuration: { baseURL: ctx().baseURL }, useResponsesApi: true });
    const answer = await model.invoke('x');
    assert.equal(answer.text, 'echoed ping');
  });
});
