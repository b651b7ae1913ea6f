// The OpenAI SDK's stream helpers (responses.stream → finalResponse) through
// everything a Palai run can stop for: a client tool, an approval, a question,
// a cancel and a failure. Each answer goes back the OpenAI way: input items on
// a request naming the waiting response as previous_response_id.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import OpenAI from 'openai';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { openAiClientFor } from '../support/openai-client.js';
import { toolResults } from '../support/tool-results.js';

type Output = OpenAI.Responses.ResponseOutputItem;
const palaiStatus = (response: OpenAI.Responses.Response) => (response as unknown as { palai_status: string }).palai_status;
const find = <T extends Output['type']>(response: OpenAI.Responses.Response, type: T) =>
  response.output.filter((item): item is Extract<Output, { type: T }> => item.type === type);

await describeEachStore('OpenAI SDK stream helpers through waits', (ctx) => {
  const sdk = openAiClientFor(ctx);
  let client: OpenAI;

  before(async () => {
    client = sdk();
    await createAgent(ctx, {
      name: 'w-tool',
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, { text: 'It is sunny in Oslo' }] },
    });
  });

  test('a client tool call: finalResponse() is completed with the function_call; its output resumes the same run', async () => {
    const first = await client.responses.stream({ model: 'w-tool', input: 'weather in Oslo?' }).finalResponse();
    assert.equal(first.status, 'completed');
    assert.equal(palaiStatus(first), 'waiting_for_tool');
    const [call] = find(first, 'function_call');
    assert.equal(call.name, 'get_weather');

    const types: string[] = [];
    const stream = client.responses.stream({
      model: 'w-tool',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
    });
    stream.on('event', (event) => types.push(event.type));
    const second = await stream.finalResponse();
    assert.equal(second.id, first.id, 'the waiting run itself resumed');
    assert.equal(palaiStatus(second), 'completed');
    assert.equal(second.output_text, 'It is sunny in Oslo');
    assert.equal(types[0], 'response.created', 'the resumed stream opens with the snapshot the helper needs');
    assert.equal(types.at(-1), 'response.completed');
    // The answer is this turn, as OpenAI answers a new request: the caller's own output is input, not output;
    // the response itself keeps it.
    assert.equal(find(second, 'function_call_output').length, 0);
    assert.deepEqual(
      find(second, 'function_call').map((item) => item.call_id),
      [],
      'the call of the earlier turn is not shown again',
    );
    const whole = await client.responses.retrieve(first.id);
    assert.equal(find(whole, 'function_call_output')[0].output, 'sunny');
  });

  test('an approval is an mcp_approval_request; an mcp_approval_response approves it and the tool runs', async () => {
    await createAgent(ctx, {
      name: 'w-approve',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'ship it' } }] }, { text: 'shipped' }] },
      tools: [{ type: 'builtin', name: 'echo' }],
      approval: { tools: ['echo'] },
    });
    const first = await client.responses.stream({ model: 'w-approve', input: 'ship' }).finalResponse();
    assert.equal(first.status, 'completed');
    assert.equal(palaiStatus(first), 'waiting_for_approval');
    const [request] = find(first, 'mcp_approval_request');
    assert.equal(request.name, 'echo');
    assert.equal(request.server_label, 'palai');
    assert.deepEqual(JSON.parse(request.arguments), { text: 'ship it' });

    const second = await client.responses
      .stream({
        model: 'w-approve',
        previous_response_id: first.id,
        input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
      })
      .finalResponse();
    assert.equal(palaiStatus(second), 'completed');
    assert.equal(second.output_text, 'shipped');
    assert.equal(find(second, 'mcp_approval_request').length, 0, 'decided: no longer requested');
    // The tool ran in this turn: the answer shows its call, with the output.
    const [ran] = find(second, 'mcp_call');
    assert.equal(ran.name, 'echo');
    assert.match(String(ran.output), /ship it/);
  });

  test('an approval denied with a reason: the denial is the tool result and the run goes on', async () => {
    await createAgent(ctx, {
      name: 'w-deny',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'rm -rf' } }] }, { text: 'understood' }] },
      tools: [{ type: 'builtin', name: 'echo' }],
      approval: { tools: ['echo'] },
    });
    const first = await client.responses.create({ model: 'w-deny', input: 'clean up' });
    const [request] = find(first, 'mcp_approval_request');
    const second = await client.responses.create({
      model: 'w-deny',
      previous_response_id: first.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false, reason: 'too risky' }],
    });
    assert.equal(second.output_text, 'understood');
    assert.deepEqual(JSON.parse(String(find(second, 'mcp_call')[0].output)), { denied: true, reason: 'too risky' });
  });

  test('a question is an assistant message; a user message answers it and the run goes on', async () => {
    await createAgent(ctx, {
      name: 'w-ask',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which city?' } }] }, { text: 'Oslo it is' }] },
      tools: [{ type: 'builtin', name: 'ask_user' }],
    });
    const first = await client.responses.stream({ model: 'w-ask', input: 'weather?' }).finalResponse();
    assert.equal(first.status, 'completed');
    assert.equal(palaiStatus(first), 'waiting_for_input');
    assert.equal(first.output_text, 'Which city?', 'a chat UI shows the question');

    const second = await client.responses.stream({ model: 'w-ask', previous_response_id: first.id, input: 'Oslo' }).finalResponse();
    assert.equal(palaiStatus(second), 'completed');
    assert.equal(second.output_text, 'Oslo it is');
    assert.deepEqual(toolResults(second.output), [], "the caller's answer is input of this turn");
    assert.deepEqual(find(second, 'mcp_call'), [], 'the question of the earlier turn is not shown again');
    const whole = await client.responses.retrieve(first.id);
    const [asked] = find(whole, 'mcp_call');
    assert.equal(asked.name, 'ask_user');
    assert.equal(asked.output, 'Oslo', 'the answer is the tool result');
  });

  test('a cancel mid-stream: finalResponse() is cancelled with the text so far', async () => {
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
    await createAgent(ctx, { name: 'w-slow', model: { provider: 'fake', script: [{ text: words, delay_ms: 50 }] } });
    const stream = client.responses.stream({ model: 'w-slow', input: 'talk' });
    const id = await new Promise<string>((resolve) => {
      let deltas = 0;
      let responseId = '';
      stream.on('response.created', (event) => (responseId = event.response.id));
      stream.on('response.output_text.delta', () => ++deltas === 3 && resolve(responseId));
    });
    const cancelled = await client.responses.cancel(id);
    assert.equal(cancelled.status, 'cancelled');
    const final = await stream.finalResponse();
    assert.equal(final.status, 'cancelled');
    assert.equal(palaiStatus(final), 'canceled');
  });

  test('a failure: finalResponse() is failed with the error, and create() answers it too', async () => {
    await createAgent(ctx, { name: 'w-fail', model: { provider: 'fake', script: [{ error: { status: 400, message: 'the provider refused' } }] } });
    const final = await client.responses.stream({ model: 'w-fail', input: 'x' }).finalResponse();
    assert.equal(final.status, 'failed');
    assert.match(String(final.error?.message), /the provider refused/);
    const plain = await client.responses.create({ model: 'w-fail', input: 'x' });
    assert.equal(plain.status, 'failed');
  });

  test("responses.stream({response_id}) replays a waiting response's stream to the same final state", async () => {
    const first = await client.responses.create({ model: 'w-tool', input: 'weather?' });
    const replayed = await client.responses.stream({ response_id: first.id }).finalResponse();
    assert.equal(replayed.id, first.id);
    assert.equal(palaiStatus(replayed), 'waiting_for_tool');
    assert.deepEqual(
      replayed.output.map((item) => item.type),
      first.output.map((item) => item.type),
    );
  });

  test("Palai-Events: extended streams Palai's own events to a client that asks", async () => {
    const stream = await client.responses.create({ model: 'w-tool', input: 'weather?', stream: true }, { headers: { 'Palai-Events': 'extended' } });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    assert.equal(types.at(-1), 'response.waiting_for_tool');
    await assert.rejects(client.responses.create({ model: 'w-tool', input: 'x' }, { headers: { 'Palai-Events': 'everything' } }), OpenAI.BadRequestError);
  });

  test('answers that do not fit are refused with the SDK error class, code and parameter; nothing changes', async () => {
    const first = await client.responses.create({ model: 'w-tool', input: 'weather?' });
    const [call] = find(first, 'function_call');
    const answer = (input: OpenAI.Responses.ResponseInput) => client.responses.create({ model: 'w-tool', previous_response_id: first.id, input });
    await assert.rejects(answer([{ type: 'function_call_output', call_id: 'call_unknown', output: 'x' }]), (error: unknown) => {
      assert.ok(error instanceof OpenAI.ConflictError, String(error));
      assert.equal(error.code, 'invalid-state');
      assert.equal(error.param, 'input[0]');
      return true;
    });
    await assert.rejects(answer([{ type: 'mcp_approval_response', approval_request_id: call.call_id, approve: true }]), OpenAI.ConflictError);
    await assert.rejects(answer([{ type: 'function_call', call_id: 'c', name: 'get_weather', arguments: '{}' }]), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.match(error.message, /takes only answers/);
      return true;
    });
    await assert.rejects(
      client.responses.create({
        model: 'sdk-other',
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'x' }],
      }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, String(error));
        assert.equal(error.param, 'model');
        return true;
      },
    );
    const unchanged = await client.responses.retrieve(first.id);
    assert.equal(palaiStatus(unchanged), 'waiting_for_tool');
    assert.deepEqual(unchanged.output, first.output);
    await assert.rejects(
      client.responses.create({ model: 'w-tool', input: [{ type: 'mcp_approval_response', approval_request_id: 'x', approve: true }] }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, String(error));
        assert.equal(error.param, 'input[0]');
        assert.match(error.message, /previous_response_id/);
        return true;
      },
    );
  });
});
