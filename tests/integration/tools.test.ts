// Tools: built-in tools run by the hub, client-side function tools whose outputs
// the caller supplies (through /tool_outputs or an OpenAI-style continuation),
// and ask_user, which suspends a response until someone answers.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { parseSse } from '../support/sse.js';
import { matchesSchema } from '../../adapters/http/validation.js';
import { ranCalls, toolResult, toolResults } from '../support/tool-results.js';

const TERMINAL_EVENTS = ['response.completed', 'response.failed', 'response.cancelled', 'response.incomplete'];

const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

await describeEachStore('tools', (ctx) => {
  /** Parses SSE text and checks each frame against the document. */
  const framesOf = (text: string): any[] =>
    parseSse(text).map((frame) => {
      assert.equal(frame.id, String(frame.data.sequence_number));
      assert.equal(frame.event, frame.data.type);
      const check = matchesSchema('ResponseStreamEvent', frame.data);
      assert.ok(check.ok, `${JSON.stringify(check.errors)}: ${JSON.stringify(frame.data)}`);
      return frame.data;
    });

  /** GET /v1/responses/{id}/events, optionally resuming with Last-Event-ID. */
  const events = async (id: string, lastEventId?: number): Promise<any[]> => {
    const { http, auth } = ctx();
    const req = http.get(`/v1/responses/${id}/events`).set(auth).timeout(10_000);
    if (lastEventId !== undefined) req.set('Last-Event-ID', String(lastEventId));
    const res = await req;
    assertMatchesSpec(res, 'getResponseEvents');
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    return framesOf(res.text);
  };

  const getResponse = async (id: string) => {
    const res = await ctx().http.get(`/v1/responses/${id}`).set(ctx().auth);
    assertMatchesSpec(res, 'getResponse');
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  const post = async (path: string, operationId: 'submitToolOutputs' | 'submitInput', body: unknown) => {
    const res = await ctx()
      .http.post(path)
      .set(ctx().auth)
      .send(body as object);
    assertMatchesSpec(res, operationId);
    return res;
  };

  const responseCount = async (): Promise<number> => {
    const { rows } = await ctx().hub.kernel.db.query<{ n: number }>('SELECT count(*)::integer AS n FROM responses WHERE project_id = $1', [ctx().projectId]);
    return rows[0].n;
  };

  const weatherAgent = (name: string, then: object[] = [{ text: 'It is sunny' }]) =>
    createAgent(ctx, {
      name,
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, ...then] },
      tools: [WEATHER_TOOL],
    });

  test("a built-in tool runs on the hub and its output comes in the call's mcp_call, under the same call_id", async () => {
    await createAgent(ctx, {
      name: 'echoer',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { text: 'done' }] },
      tools: [{ type: 'builtin', name: 'echo' }],
    });
    const res = await respond(ctx, { model: 'echoer', input: 'say hi' });
    assert.equal(res.status, 'completed');
    assert.equal(res.required_action, null);
    assert.deepEqual(
      res.output.map((i: { type: string }) => i.type),
      ['mcp_call', 'message'],
    );
    const [call, message] = res.output;
    assert.equal(call.name, 'echo');
    assert.equal(call.server_label, 'palai');
    assert.deepEqual(JSON.parse(call.arguments), { text: 'hi' });
    assert.equal(call.output, 'hi');
    assert.equal(call.error, null);
    assert.equal(call.status, 'completed');
    // The kernel keeps the call and its output, under the call id the mcp_call names.
    const kept = (await ctx().hub.api.responses.get(ctx().projectId, res.id)).output;
    assert.deepEqual(
      kept.map((i) => i.type),
      ['function_call', 'function_call_output', 'message'],
    );
    const [keptCall, keptResult] = kept as Array<{ id: string; call_id: string; output?: string }>;
    assert.equal(call.id, keptCall.id);
    assert.equal(call.approval_request_id, keptCall.call_id);
    assert.equal(keptResult.call_id, keptCall.call_id);
    assert.equal(keptResult.output, 'hi');
    assert.equal(message.role, 'assistant');
    assert.equal(res.output_text, 'done');
  });

  test('parallel calls in one step each get their own mcp_call output, all committed', async () => {
    await createAgent(ctx, {
      name: 'parallel',
      model: {
        provider: 'fake',
        script: [
          { tool_calls: [{ name: 'echo', arguments: { text: 'one' } }, { name: 'echo', arguments: { text: 'two' } }, { name: 'current_time' }] },
          { text: 'done' },
        ],
      },
      tools: [
        { type: 'builtin', name: 'echo' },
        { type: 'builtin', name: 'current_time' },
      ],
    });
    const before = Date.now();
    const res = await respond(ctx, { model: 'parallel', input: 'go' });
    assert.equal(res.status, 'completed');
    const calls = ranCalls(res.output).map((c) => ({ ...c, call_id: c.approval_request_id }));
    const results = toolResults(res.output);
    assert.equal(calls.length, 3);
    assert.equal(results.length, 3);
    assert.equal(new Set(calls.map((c) => c.call_id)).size, 3, 'each call has its own call_id');
    const outputOf = new Map(results.map((r) => [r.call_id, r.output]));
    assert.equal(outputOf.size, 3, 'one output per call');
    assert.equal(outputOf.get(calls[0].call_id), 'one');
    assert.equal(outputOf.get(calls[1].call_id), 'two');
    const time = Date.parse(outputOf.get(calls[2].call_id) as string);
    assert.ok(time >= before - 5_000 && time <= Date.now() + 5_000, `current_time answered ${outputOf.get(calls[2].call_id)}`);
    assert.equal(res.output.at(-1).type, 'message');
    assert.equal(res.output_text, 'done');
    // Each output was journaled as a finished item: its mcp_call, done with the output.
    const done = (await events(res.id)).filter((e) => e.type === 'response.output_item.done' && e.item.type === 'mcp_call' && e.item.output !== null);
    assert.deepEqual(done.map((e) => e.item.approval_request_id).sort(), calls.map((c) => c.call_id).sort());
    assert.deepEqual(done.map((e) => e.item.output).sort(), results.map((r) => r.output).sort());
  });

  test('arguments that fail a built-in tool’s schema are answered to the model as an error, and the run goes on', async () => {
    await createAgent(ctx, {
      name: 'bad-args',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { wrong: 1 } }] }, { text: 'recovered' }] },
      tools: [{ type: 'builtin', name: 'echo' }],
    });
    const res = await respond(ctx, { model: 'bad-args', input: 'x' });
    assert.equal(res.status, 'completed');
    const [call] = res.output;
    assert.equal(call.type, 'mcp_call');
    assert.equal(toolResult(res.output)!.call_id, call.approval_request_id);
    assert.match(JSON.parse(call.output).error, /Invalid arguments/);
    assert.equal(res.output_text, 'recovered');
  });

  test('an agent spec naming an unknown built-in tool is a 400 pointing at the name', async () => {
    const res = await ctx()
      .http.post('/v1/agents')
      .set(ctx().auth)
      .send({ name: 'no-such-tool', model: { provider: 'fake' }, tools: [{ type: 'builtin', name: 'teleport' }] });
    assertMatchesSpec(res, 'createAgent');
    assertProblem(res, 400, 'validation-failed');
    assert.equal(res.body.errors[0].pointer, '/tools/0/name');
    const read = await ctx().http.get('/v1/agents/no-such-tool').set(ctx().auth);
    assertProblem(read, 404, 'agent-not-found');
  });

  test('a client function call parks the response waiting_for_tool; its submitted output completes it', async () => {
    await weatherAgent('weather');
    const waiting = await respond(ctx, { model: 'weather', input: 'weather in Oslo?' });
    assert.equal(waiting.palai_status, 'waiting_for_tool');
    assert.equal(waiting.completed_at, null);
    const [call] = waiting.output;
    assert.equal(call.type, 'function_call');
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(waiting.required_action, {
      type: 'submit_tool_outputs',
      calls: [{ call_id: call.call_id, name: 'get_weather', arguments: call.arguments, risk: 'read', waiting_for: 'tool_output' }],
    });
    assert.deepEqual(JSON.parse(call.arguments), { city: 'Oslo' });

    const res = await post(`/v1/responses/${waiting.id}/tool_outputs`, 'submitToolOutputs', { outputs: [{ call_id: call.call_id, output: 'sunny' }] });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'completed', 'the answer waits until the response settles');
    assert.equal(res.body.required_action, null);
    const result = toolResult(res.body.output)!;
    assert.equal(result.call_id, call.call_id);
    assert.equal(result.output, 'sunny');
    assert.equal(res.body.output_text, 'It is sunny');
    assert.deepEqual(await getResponse(waiting.id), res.body);
  });

  test('a streamed run that waits for a tool ends its stream as OpenAI ends a response: response.completed, palai_status waiting', async () => {
    await weatherAgent('weather-stream-default');
    const live = await ctx()
      .http.post('/v1/responses')
      .set(ctx().auth)
      .send({ model: 'weather-stream-default', input: 'weather?', stream: true })
      .timeout(10_000);
    const frames = framesOf(live.text);
    assert.deepEqual(
      frames.filter((e) => TERMINAL_EVENTS.includes(e.type)).map((e) => e.type),
      ['response.completed'],
    );
    const last = frames.at(-1);
    assert.equal(last.type, 'response.completed');
    assert.equal(last.response.status, 'completed');
    assert.equal(last.response.palai_status, 'waiting_for_tool');
    const call = last.response.output.find((item: { type: string }) => item.type === 'function_call');
    assert.equal(call.call_id, last.response.required_action.calls[0].call_id, 'what it waits for is among its output items');
  });

  test('Palai-Events: extended streams response.waiting_for_tool; /events resumes after it', async () => {
    await weatherAgent('weather-stream');
    const live = await ctx()
      .http.post('/v1/responses')
      .set(ctx().auth)
      .set('Palai-Events', 'extended')
      .send({ model: 'weather-stream', input: 'weather?', stream: true })
      .timeout(10_000);
    assert.equal(live.status, 200);
    assert.match(String(live.headers['content-type']), /^text\/event-stream/);
    const first = framesOf(live.text);
    assert.deepEqual(
      first.map((e) => e.sequence_number),
      first.map((_, i) => i),
    );
    const waiting = first.at(-1);
    assert.equal(waiting.type, 'response.waiting_for_tool');
    assert.equal(first.filter((e) => TERMINAL_EVENTS.includes(e.type)).length, 0, 'no terminal event while waiting');
    assert.equal(waiting.response.palai_status, 'waiting_for_tool');
    const [pending] = waiting.response.required_action.calls;

    const res = await post(`/v1/responses/${waiting.response.id}/tool_outputs`, 'submitToolOutputs', {
      outputs: [{ call_id: pending.call_id, output: 'sunny' }],
    });
    assert.equal(res.body.status, 'completed');

    const rest = await events(waiting.response.id, waiting.sequence_number);
    assert.equal(rest[0].sequence_number, waiting.sequence_number + 1, 'resumes right after the waiting event');
    assert.deepEqual(
      rest.map((e) => e.sequence_number),
      rest.map((_, i) => waiting.sequence_number + 1 + i),
    );
    const types = rest.map((e) => e.type);
    assert.ok(types.includes('response.in_progress'), types.join(' '));
    assert.equal(types.at(-1), 'response.completed');
    assert.equal(types.filter((t) => TERMINAL_EVENTS.includes(t)).length, 1);
    const output = rest.find((e) => e.type === 'response.output_item.done' && e.item.type === 'function_call_output');
    assert.equal(output.item.output, 'sunny');
    assert.ok(types.indexOf('response.in_progress') < types.indexOf('response.completed'));
    assert.equal(rest.at(-1).response.output_text, 'It is sunny');
  });

  test('previous_response_id with the function_call_output items resumes the waiting response itself: no new response', async () => {
    await weatherAgent('weather-chain');
    const a = await respond(ctx, { model: 'weather-chain', input: 'weather?' });
    assert.equal(a.palai_status, 'waiting_for_tool');
    const [pending] = a.required_action.calls;
    const count = await responseCount();
    const b = await respond(ctx, {
      model: 'weather-chain',
      previous_response_id: a.id,
      input: [{ type: 'function_call_output', call_id: pending.call_id, output: 'sunny' }],
    });
    assert.equal(b.id, a.id, 'the same durable run answers');
    assert.equal(b.palai_status, 'completed');
    assert.equal(b.output_text, 'It is sunny');
    assert.equal(await responseCount(), count, 'no new response was admitted');
    const journal = await events(a.id);
    assert.equal(journal.at(-1).type, 'response.completed');
    assert.equal(journal.filter((e) => TERMINAL_EVENTS.includes(e.type)).length, 1);
    const output = journal.find((e) => e.type === 'response.output_item.done' && e.item.type === 'function_call_output');
    assert.equal(output.item.output, 'sunny');
  });

  test('continuing a waiting response with something other than its tool outputs is a 409 naming them, and changes nothing', async () => {
    await weatherAgent('weather-no-output');
    const a = await respond(ctx, { model: 'weather-no-output', input: 'weather?' });
    assert.equal(a.palai_status, 'waiting_for_tool');
    const eventsBefore = await events(a.id);
    const count = await responseCount();
    const res = await ctx().http.post('/v1/responses').set(ctx().auth).send({ model: 'weather-no-output', previous_response_id: a.id, input: 'never mind' });
    assertMatchesSpec(res, 'createResponse');
    assertProblem(res, 409, 'invalid-state');
    assert.equal(res.body.errors[0].pointer, '/input');
    assert.match(res.body.detail, new RegExp(`the output of ${a.required_action.calls[0].call_id}`));
    assert.deepEqual(await getResponse(a.id), a);
    assert.deepEqual(await events(a.id), eventsBefore);
    assert.equal(await responseCount(), count, 'no new response was admitted');
  });

  test('/tool_outputs: unknown response, a call not pending, duplicates, a finished response, a malformed body', async () => {
    const { http, auth } = ctx();
    await weatherAgent('weather-bad-input');
    const a = await respond(ctx, { model: 'weather-bad-input', input: 'weather?' });
    const [pending] = a.required_action.calls;
    const eventsBefore = await events(a.id);

    const unknown = await post('/v1/responses/resp_00000000000000000000000000/tool_outputs', 'submitToolOutputs', {
      outputs: [{ call_id: 'call_x', output: 'x' }],
    });
    assertProblem(unknown, 404, 'not-found');

    const notPending = await post(`/v1/responses/${a.id}/tool_outputs`, 'submitToolOutputs', { outputs: [{ call_id: 'call_nope', output: 'x' }] });
    assertProblem(notPending, 409, 'invalid-state');
    assert.equal(notPending.body.errors[0].pointer, '/outputs/0/call_id', 'points into the request body');

    // A valid output next to an unknown call: the whole request is refused.
    const mixed = await post(`/v1/responses/${a.id}/tool_outputs`, 'submitToolOutputs', {
      outputs: [
        { call_id: pending.call_id, output: 'sunny' },
        { call_id: 'call_nope', output: 'x' },
      ],
    });
    assertProblem(mixed, 409, 'invalid-state');
    assert.equal(mixed.body.errors[0].pointer, '/outputs/1/call_id');

    const duplicate = await post(`/v1/responses/${a.id}/tool_outputs`, 'submitToolOutputs', {
      outputs: [
        { call_id: pending.call_id, output: 'sunny' },
        { call_id: pending.call_id, output: 'rainy' },
      ],
    });
    assertProblem(duplicate, 400, 'validation-failed');
    assert.equal(duplicate.body.errors[0].pointer, '/outputs/1/call_id');

    const malformed = await post(`/v1/responses/${a.id}/tool_outputs`, 'submitToolOutputs', { output: 'sunny' });
    assertProblem(malformed, 400, 'validation-failed');
    assert.ok(
      malformed.body.errors.some((e: { pointer: string }) => e.pointer === '/outputs'),
      JSON.stringify(malformed.body.errors),
    );

    const empty = await post(`/v1/responses/${a.id}/tool_outputs`, 'submitToolOutputs', { outputs: [] });
    assertProblem(empty, 400, 'validation-failed');

    assert.deepEqual(await getResponse(a.id), a, 'nothing changed');
    assert.deepEqual(await events(a.id), eventsBefore);

    const done = await post(`/v1/responses/${a.id}/tool_outputs`, 'submitToolOutputs', { outputs: [{ call_id: pending.call_id, output: 'sunny' }] });
    assert.equal(done.body.status, 'completed');
    const again = await post(`/v1/responses/${a.id}/tool_outputs`, 'submitToolOutputs', { outputs: [{ call_id: pending.call_id, output: 'sunny' }] });
    assertProblem(again, 409, 'invalid-state');

    await createAgent(ctx, { name: 'plain-echo', model: { provider: 'fake' } });
    const finished = await respond(ctx, { model: 'plain-echo', input: 'x' });
    const onFinished = await http
      .post(`/v1/responses/${finished.id}/tool_outputs`)
      .set(auth)
      .send({ outputs: [{ call_id: 'call_x', output: 'x' }] });
    assertMatchesSpec(onFinished, 'submitToolOutputs');
    assertProblem(onFinished, 409, 'invalid-state');
  });

  test('ask_user parks the response waiting_for_input with the question; the answer becomes the tool output', async () => {
    await createAgent(ctx, {
      name: 'asker',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which city?' } }] }, { text: 'ok' }] },
      tools: [{ type: 'builtin', name: 'ask_user' }],
    });
    const waiting = await respond(ctx, { model: 'asker', input: 'weather?' });
    assert.equal(waiting.palai_status, 'waiting_for_input');
    assert.equal(waiting.required_action.type, 'answer_question');
    const [question] = waiting.required_action.calls;
    assert.equal(question.question, 'Which city?');
    assert.equal(question.name, 'ask_user');
    assert.equal(question.waiting_for, 'input');
    const [asked] = ranCalls(waiting.output);
    assert.equal(asked.name, 'ask_user');
    assert.equal(asked.output, null, 'not answered yet');
    assert.equal(question.call_id, asked.approval_request_id);

    const res = await post(`/v1/responses/${waiting.id}/input`, 'submitInput', { input: 'Oslo' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'completed');
    const answer = toolResult(res.body.output)!;
    assert.equal(answer.call_id, question.call_id);
    assert.equal(answer.output, 'Oslo');
    assert.equal(res.body.output_text, 'ok');
  });

  test('/input on a response that asked nothing is a 409; an input of the wrong type is a 400', async () => {
    await createAgent(ctx, {
      name: 'asker-2',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which city?' } }] }, { text: 'ok' }] },
      tools: [{ type: 'builtin', name: 'ask_user' }],
    });
    const waiting = await respond(ctx, { model: 'asker-2', input: 'weather?' });
    assert.equal(waiting.palai_status, 'waiting_for_input');
    const wrongType = await post(`/v1/responses/${waiting.id}/input`, 'submitInput', { input: 42 });
    assertProblem(wrongType, 400, 'validation-failed');
    const missing = await post(`/v1/responses/${waiting.id}/input`, 'submitInput', {});
    assertProblem(missing, 400, 'validation-failed');
    assert.deepEqual(await getResponse(waiting.id), waiting, 'nothing changed');

    await weatherAgent('weather-input');
    const toolWait = await respond(ctx, { model: 'weather-input', input: 'weather?' });
    assert.equal(toolWait.palai_status, 'waiting_for_tool');
    const notAsked = await post(`/v1/responses/${toolWait.id}/input`, 'submitInput', { input: 'Oslo' });
    assertProblem(notAsked, 409, 'invalid-state');
    assert.deepEqual(await getResponse(toolWait.id), toolWait);

    const answered = await post(`/v1/responses/${waiting.id}/input`, 'submitInput', { input: 'Oslo' });
    assert.equal(answered.body.status, 'completed');
    const again = await post(`/v1/responses/${waiting.id}/input`, 'submitInput', { input: 'Bergen' });
    assertProblem(again, 409, 'invalid-state');
  });

  test('a remote body with NUL bytes reaches the model intact as JSON text, and the run completes', async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.end('before\u0000after');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/nul`;
      await createAgent(ctx, {
        name: 'nul-body',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'http_post', arguments: { url } }] }, { text: 'done' }] },
        tools: [{ type: 'builtin', name: 'http_post' }],
      });
      const res = await respond(ctx, { model: 'nul-body', input: 'post' });
      assert.equal(res.status, 'completed', JSON.stringify(res.error));
      const output = toolResult(res.output)!;
      assert.deepEqual(JSON.parse(output.output), { status: 200, body: 'before\u0000after' });
    } finally {
      server.close();
    }
  });
});
