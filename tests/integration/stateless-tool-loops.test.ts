// Clients that resend the whole history on every turn (the AI SDK's
// `.responses()`, the Agents SDK's default mode, LangChain's Responses API use),
// driven here with the `openai` SDK: a history ending with the outputs of a
// waiting response's client calls resumes that response; any other history is
// a new response over the whole conversation, as with OpenAI. Also: a
// conversation continued with an empty input, call ids unique across
// responses, and a script that plays alike however the client sends the history.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import OpenAI from 'openai';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { openAiClientFor } from '../support/openai-client.js';

type Output = OpenAI.Responses.ResponseOutputItem;
type InputItem = OpenAI.Responses.ResponseInputItem;
type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;

const palaiStatus = (response: OpenAI.Responses.Response) => (response as unknown as { palai_status: string }).palai_status;
const callsOf = (response: OpenAI.Responses.Response) =>
  response.output.filter((item): item is Extract<Output, { type: 'function_call' }> => item.type === 'function_call');
const outputOf = (callId: string, output: string): InputItem => ({ type: 'function_call_output', call_id: callId, output });
const weatherTool = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
/** A conversation after one tool loop: the question, the call, its output, the answer. */
const LOOP_ITEMS = ['message', 'function_call', 'function_call_output', 'message'];
const weatherScript = (...texts: string[]) => [{ tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, ...texts.map((text) => ({ text }))];

await describeEachStore('stateless tool loops', (ctx) => {
  const sdk = openAiClientFor(ctx);
  let client: OpenAI;
  /** The agent's responses, oldest first, as the REST API lists them. */
  const responsesOf = async (agent: string): Promise<Array<{ id: string; palai_status: string }>> => {
    const res = await ctx().http.get(`/v1/responses?agent=${agent}&order=asc&limit=100`).set(ctx().auth);
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };
  const itemTypes = async (conversationId: string) => (await client.conversations.items.list(conversationId, { order: 'asc' })).data.map((item) => item.type);
  const weatherAgent = (name: string, ...texts: string[]) =>
    createAgent(ctx, { name, tools: [weatherTool], model: { provider: 'fake', script: weatherScript(...texts) } });

  before(async () => {
    client = sdk();
    await createAgent(ctx, { name: 'sl-echo', model: { provider: 'fake' } });
  });

  test('a history ending with the outputs of a waiting response resumes that response: one response, completed, with the output', async () => {
    await weatherAgent('sl-loop', 'It is sunny in Oslo');
    const history: InputItem[] = [{ role: 'user', content: 'weather in Oslo?' }];
    const first = await client.responses.create({ model: 'sl-loop', input: history });
    assert.equal(palaiStatus(first), 'waiting_for_tool');
    const [call] = callsOf(first);
    assert.equal(call.name, 'get_weather');

    const resent = [...history, ...(first.output as InputItem[]), outputOf(call.call_id, 'sunny, 21°C')];
    const second = await client.responses.create({ model: 'sl-loop', input: resent });
    assert.equal(second.id, first.id, 'the waiting response itself resumed');
    assert.equal(palaiStatus(second), 'completed');
    assert.equal(second.output_text, 'It is sunny in Oslo');
    assert.deepEqual(
      second.output.map((item) => item.type),
      ['message'],
      "the answer is this turn: the caller's output is input, and the earlier call is not shown again",
    );
    const whole = await client.responses.retrieve(first.id);
    const outputs = whole.output.filter((item) => item.type === 'function_call_output');
    assert.deepEqual(
      outputs.map((item) => [item.call_id, item.output]),
      [[call.call_id, 'sunny, 21°C']],
      'only the trailing outputs are the answer',
    );
    assert.deepEqual(
      (await responsesOf('sl-loop')).map((r) => [r.id, r.palai_status]),
      [[first.id, 'completed']],
    );
    const inputItems = await client.responses.inputItems.list(first.id);
    assert.equal(inputItems.data.length, 1, 'the resent history was not added to its input');
  });

  test('streamed, the resumed response opens with its snapshot and streams only what it did after the wait', async () => {
    await weatherAgent('sl-stream', 'Sunny it is');
    const history: InputItem[] = [{ role: 'user', content: 'weather?' }];
    const first = await client.responses.stream({ model: 'sl-stream', input: history }).finalResponse();
    const [call] = callsOf(first);
    const types: string[] = [];
    let text = '';
    const stream = client.responses.stream({ model: 'sl-stream', input: [...history, ...(first.output as InputItem[]), outputOf(call.call_id, 'sunny')] });
    stream.on('event', (event) => {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    });
    const final = await stream.finalResponse();
    assert.equal(final.id, first.id);
    assert.equal(final.output_text, 'Sunny it is');
    assert.equal(text, 'Sunny it is', 'the deltas of the resumed part only');
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    assert.equal(types.filter((type) => type === 'response.completed').length, 1, 'the first wait is not replayed');
  });

  test('a resent history with no waiting response is a new response over the whole conversation', async () => {
    const history: InputItem[] = [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: 'three four' },
    ];
    const response = await client.responses.create({ model: 'sl-echo', input: history });
    assert.equal(palaiStatus(response), 'completed');
    assert.equal(response.output_text, 'three four');
    assert.equal(response.usage!.input_tokens, 4, 'the model saw every message');
    assert.equal((await client.responses.inputItems.list(response.id)).data.length, 3);

    // A finished loop's history sent again: its calls wait for nothing now, so a new response runs.
    await weatherAgent('sl-again', 'first', 'second');
    const first = await client.responses.create({ model: 'sl-again', input: 'weather?' });
    const [call] = callsOf(first);
    const loop: InputItem[] = [{ role: 'user', content: 'weather?' }, ...(first.output as InputItem[]), outputOf(call.call_id, 'sunny')];
    const resumed = await client.responses.create({ model: 'sl-again', input: loop });
    assert.equal(resumed.id, first.id);
    const again = await client.responses.create({ model: 'sl-again', input: loop });
    assert.notEqual(again.id, first.id);
    assert.equal(palaiStatus(again), 'completed');
    assert.equal((await responsesOf('sl-again')).length, 2);
  });

  test("call ids that match no waiting call, or another agent's, start a new response and leave the waiting one waiting", async () => {
    await weatherAgent('sl-owner', 'owner answer');
    await createAgent(ctx, { name: 'sl-other', tools: [weatherTool], model: { provider: 'fake' } });
    const first = await client.responses.create({ model: 'sl-owner', input: 'weather?' });
    const [call] = callsOf(first);
    const prefix: InputItem[] = [{ role: 'user', content: 'weather?' }, ...(first.output as InputItem[])];

    const mismatched = await client.responses.create({ model: 'sl-owner', input: [...prefix, outputOf('call_unknown', 'x')] });
    assert.notEqual(mismatched.id, first.id);
    // One answered call and one unknown: not this response's answer either.
    const mixed = await client.responses.create({ model: 'sl-owner', input: [...prefix, outputOf(call.call_id, 'x'), outputOf('call_unknown', 'y')] });
    assert.notEqual(mixed.id, first.id);
    const otherAgent = await client.responses.create({ model: 'sl-other', input: [...prefix, outputOf(call.call_id, 'sunny')] });
    assert.notEqual(otherAgent.id, first.id);
    assert.equal(palaiStatus(otherAgent), 'completed');
    assert.equal(((await client.responses.retrieve(first.id)) as unknown as { palai_status: string }).palai_status, 'waiting_for_tool');

    const owner = await client.responses.create({ model: 'sl-owner', input: [...prefix, outputOf(call.call_id, 'sunny')] });
    assert.equal(owner.id, first.id, 'its own agent still resumes it');
    assert.equal(owner.output_text, 'owner answer');
  });

  test("a cancelled response's calls are never matched: the history is a new response", async () => {
    await weatherAgent('sl-cancel', 'after cancel');
    const first = await client.responses.create({ model: 'sl-cancel', input: 'weather?' });
    const [call] = callsOf(first);
    await client.responses.cancel(first.id);
    const next = await client.responses.create({
      model: 'sl-cancel',
      input: [{ role: 'user', content: 'weather?' }, ...(first.output as InputItem[]), outputOf(call.call_id, 'sunny')],
    });
    assert.notEqual(next.id, first.id);
    assert.equal(((await client.responses.retrieve(first.id)) as unknown as { palai_status: string }).palai_status, 'canceled');

    // Chat Completions likewise: the tool message of a cancelled response's call starts a new one.
    const messages: ChatMessage[] = [{ role: 'user', content: 'weather?' }];
    const chat = await client.chat.completions.create({ model: 'sl-cancel', messages });
    const [chatCall] = chat.choices[0].message.tool_calls ?? [];
    await client.responses.cancel(chat.id);
    const after = await client.chat.completions.create({
      model: 'sl-cancel',
      messages: [...messages, chat.choices[0].message, { role: 'tool', tool_call_id: chatCall.id, content: 'sunny' }],
    });
    assert.notEqual(after.id, chat.id);
  });

  test('Chat Completions: resending the messages with tool results resumes the response of that agent only', async () => {
    await weatherAgent('sl-chat', 'chat says sunny');
    await createAgent(ctx, { name: 'sl-chat-other', tools: [weatherTool], model: { provider: 'fake' } });
    const messages: ChatMessage[] = [{ role: 'user', content: 'weather?' }];
    const first = await client.chat.completions.create({ model: 'sl-chat', messages });
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    const [call] = first.choices[0].message.tool_calls ?? [];
    const resent: ChatMessage[] = [...messages, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'sunny' }];

    const other = await client.chat.completions.create({ model: 'sl-chat-other', messages: resent });
    assert.notEqual(other.id, first.id, "another agent's chat does not answer it");
    const second = await client.chat.completions.create({ model: 'sl-chat', messages: resent });
    assert.equal(second.id, first.id);
    assert.equal(second.choices[0].message.content, 'chat says sunny');
    assert.equal((await responsesOf('sl-chat')).length, 1);
  });

  test('a conversation with input [] runs a new response over its items; one whose outputs were added to it resumes its waiting response', async () => {
    const conversation = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'hello there' }] });
    const echoed = await client.responses.create({ model: 'sl-echo', conversation: conversation.id, input: [] });
    assert.equal(palaiStatus(echoed), 'completed');
    assert.equal(echoed.output_text, 'hello there');

    await weatherAgent('sl-conv', 'conversation answer', 'next answer');
    const talk = await client.conversations.create({});
    const first = await client.responses.create({ model: 'sl-conv', conversation: talk.id, input: 'weather?' });
    const [call] = callsOf(first);
    await client.conversations.items.create(talk.id, { items: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }] });
    const resumed = await client.responses.create({ model: 'sl-conv', conversation: talk.id, input: [] });
    assert.equal(resumed.id, first.id);
    assert.equal(resumed.output_text, 'conversation answer');
    assert.deepEqual(await itemTypes(talk.id), LOOP_ITEMS, 'the added output moved into the response: the conversation holds it once, after its call');

    // Nothing waits now: input [] is a new response over the conversation, the script going on from its turns.
    const next = await client.responses.create({ model: 'sl-conv', conversation: talk.id, input: [] });
    assert.notEqual(next.id, first.id);
    assert.equal(next.output_text, 'next answer');

    await assert.rejects(client.responses.create({ model: 'sl-echo', input: [] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.param, 'input');
      return true;
    });
  });

  test("the Agents SDK's conversation mode: the outputs alone, in the conversation, resume its waiting response", async () => {
    await weatherAgent('sl-conv-outputs', 'from the outputs');
    const talk = await client.conversations.create({});
    const first = await client.responses.create({ model: 'sl-conv-outputs', conversation: talk.id, input: 'weather?' });
    const [call] = callsOf(first);
    const resumed = await client.responses.create({ model: 'sl-conv-outputs', conversation: talk.id, input: [outputOf(call.call_id, 'sunny')] });
    assert.equal(resumed.id, first.id);
    assert.equal(resumed.output_text, 'from the outputs');
    assert.deepEqual(await itemTypes(talk.id), LOOP_ITEMS);
  });

  test('call ids are unique across responses: two waiting responses of one agent are each resumed by their own outputs', async () => {
    await weatherAgent('sl-twice', 'answered');
    const a = await client.responses.create({ model: 'sl-twice', input: 'weather?' });
    const b = await client.responses.create({ model: 'sl-twice', input: 'weather?' });
    const [callA] = callsOf(a);
    const [callB] = callsOf(b);
    assert.notEqual(callA.call_id, callB.call_id);
    const resumedB = await client.responses.create({ model: 'sl-twice', input: [{ role: 'user', content: 'weather?' }, callB, outputOf(callB.call_id, 'b')] });
    assert.equal(resumedB.id, b.id);
    const resumedA = await client.responses.create({ model: 'sl-twice', input: [{ role: 'user', content: 'weather?' }, callA, outputOf(callA.call_id, 'a')] });
    assert.equal(resumedA.id, a.id);
    assert.equal((await responsesOf('sl-twice')).length, 2);
  });

  test('a scripted agent answers alike chained by previous_response_id, resending the history, and in a conversation', async () => {
    await weatherAgent('sl-same', 'first answer', 'second answer', 'third answer');
    const texts = (responses: OpenAI.Responses.Response[]) => responses.map((r) => r.output_text);

    // Chained.
    const c1 = await client.responses.create({ model: 'sl-same', input: 'weather?' });
    const c1done = await client.responses.create({ model: 'sl-same', previous_response_id: c1.id, input: [outputOf(callsOf(c1)[0].call_id, 'sunny')] });
    const c2 = await client.responses.create({ model: 'sl-same', previous_response_id: c1.id, input: 'and tomorrow?' });
    const c3 = await client.responses.create({ model: 'sl-same', previous_response_id: c2.id, input: 'and after?' });

    // Resent.
    let history: InputItem[] = [{ role: 'user', content: 'weather?' }];
    const r1 = await client.responses.create({ model: 'sl-same', input: history });
    history = [...history, ...(r1.output as InputItem[]), outputOf(callsOf(r1)[0].call_id, 'sunny')];
    const r1done = await client.responses.create({ model: 'sl-same', input: history });
    assert.equal(r1done.id, r1.id);
    const answered = r1done.output.filter((item) => item.type === 'message') as InputItem[];
    history = [...history, ...answered, { role: 'user', content: 'and tomorrow?' }];
    const r2 = await client.responses.create({ model: 'sl-same', input: history });
    history = [...history, ...(r2.output as InputItem[]), { role: 'user', content: 'and after?' }];
    const r3 = await client.responses.create({ model: 'sl-same', input: history });

    // In a conversation.
    const talk = await client.conversations.create({});
    const s1 = await client.responses.create({ model: 'sl-same', conversation: talk.id, input: 'weather?' });
    const s1done = await client.responses.create({ model: 'sl-same', conversation: talk.id, input: [outputOf(callsOf(s1)[0].call_id, 'sunny')] });
    const s2 = await client.responses.create({ model: 'sl-same', conversation: talk.id, input: 'and tomorrow?' });
    const s3 = await client.responses.create({ model: 'sl-same', conversation: talk.id, input: 'and after?' });

    const expected = ['first answer', 'second answer', 'third answer'];
    assert.deepEqual(texts([c1done, c2, c3]), expected);
    assert.deepEqual(texts([r1done, r2, r3]), expected);
    assert.deepEqual(texts([s1done, s2, s3]), expected);
  });
});
