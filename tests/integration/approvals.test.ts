// Approvals: an agent's approval policy (by tool name or by risk) parks a call
// until a human approves or denies it through /approvals, or its timeout denies
// it automatically; a denial is the tool's result and the run goes on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { parseSse } from '../support/sse.js';
import { matchesSchema } from '../../adapters/http/validation.js';
import { ranCalls, toolResult, toolResults } from '../support/tool-results.js';

const TERMINAL_EVENTS = ['response.completed', 'response.failed', 'response.cancelled', 'response.incomplete'];

const echoCall = (text: string) => ({ tool_calls: [{ name: 'echo', arguments: { text } }] });

await describeEachStore('approvals', (ctx) => {
  const getResponse = async (id: string) => {
    const res = await ctx().http.get(`/v1/responses/${id}`).set(ctx().auth);
    assertMatchesSpec(res, 'getResponse');
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  const decide = async (id: string, body: Record<string, unknown>) => {
    const res = await ctx().http.post(`/v1/responses/${id}/approvals`).set(ctx().auth).send(body);
    assertMatchesSpec(res, 'decideApproval');
    return res;
  };

  /** The whole journal, checked: gap-free from 0, every event in the document's shape. */
  const journal = async (id: string): Promise<any[]> => {
    const res = await ctx().http.get(`/v1/responses/${id}/events`).set(ctx().auth).timeout(10_000);
    assert.equal(res.status, 200, res.text);
    const events = parseSse(res.text).map((f) => f.data);
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
    for (const event of events) assert.ok(matchesSchema('ResponseStreamEvent', event).ok, JSON.stringify(event));
    return events;
  };

  const assertOneTerminalEvent = async (id: string, type: string) => {
    const events = await journal(id);
    assert.deepEqual(
      events.filter((e) => TERMINAL_EVENTS.includes(e.type)).map((e) => e.type),
      [type],
    );
    assert.equal(events.at(-1).type, type);
  };

  test('a tool named in the approval policy waits for a decision; approved, it runs and the response completes', async () => {
    await createAgent(ctx, {
      name: 'gated-echo',
      model: { provider: 'fake', script: [echoCall('approved words'), { text: 'done' }] },
      tools: [{ type: 'builtin', name: 'echo' }],
      approval: { tools: ['echo'] },
    });
    const waiting = await respond(ctx, { model: 'gated-echo', input: 'x' });
    assert.equal(waiting.palai_status, 'waiting_for_approval');
    assert.equal(waiting.required_action.type, 'approve_tool_calls');
    const [call] = waiting.required_action.calls;
    assert.equal(call.name, 'echo');
    const [ran] = ranCalls(waiting.output);
    assert.equal(call.call_id, ran.approval_request_id);
    assert.equal(ran.output, null, 'shown, not run');
    assert.equal(typeof call.arguments, 'string');
    assert.deepEqual(JSON.parse(call.arguments), { text: 'approved words' });
    assert.equal(call.risk, 'read');
    assert.equal(call.waiting_for, 'approval');
    assert.equal(call.approval_deadline, null, 'no timeout in the policy');
    assert.equal(toolResults(waiting.output).length, 0, 'the call has not run');

    const res = await decide(waiting.id, { call_id: call.call_id, decision: 'approve' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'completed');
    assert.equal(res.body.required_action, null);
    const result = toolResult(res.body.output)!;
    assert.equal(result.call_id, call.call_id);
    assert.equal(result.output, 'approved words');
    assert.equal(res.body.output_text, 'done');
    await assertOneTerminalEvent(waiting.id, 'response.completed');
  });

  test('a write tool under a risk policy waits; denied, the denial with its reason is the tool result', async () => {
    await createAgent(ctx, {
      name: 'gated-post',
      model: {
        provider: 'fake',
        script: [{ tool_calls: [{ name: 'http_post', arguments: { url: 'https://example.com/hook', body: { a: 1 } } }] }, { text: 'understood' }],
      },
      tools: [{ type: 'builtin', name: 'http_post' }],
      approval: { risks: ['write'] },
    });
    const waiting = await respond(ctx, { model: 'gated-post', input: 'x' });
    assert.equal(waiting.palai_status, 'waiting_for_approval');
    const [call] = waiting.required_action.calls;
    assert.equal(call.name, 'http_post');
    assert.equal(call.risk, 'write');
    assert.equal(call.waiting_for, 'approval');

    const res = await decide(waiting.id, { call_id: call.call_id, decision: 'deny', reason: 'not today' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'completed');
    const result = toolResult(res.body.output)!;
    assert.equal(result.call_id, call.call_id);
    assert.deepEqual(JSON.parse(result.output), { denied: true, reason: 'not today' });
    assert.equal(res.body.output_text, 'understood');
    await assertOneTerminalEvent(waiting.id, 'response.completed');
  });

  test('a risk raised in the agent spec counts for the policy', async () => {
    await createAgent(ctx, {
      name: 'privileged-echo',
      model: { provider: 'fake', script: [echoCall('careful'), { text: 'done' }] },
      tools: [{ type: 'builtin', name: 'echo', risk: 'privileged' }],
      approval: { risks: ['privileged'] },
    });
    const waiting = await respond(ctx, { model: 'privileged-echo', input: 'x' });
    assert.equal(waiting.palai_status, 'waiting_for_approval');
    const [call] = waiting.required_action.calls;
    assert.equal(call.name, 'echo');
    assert.equal(call.risk, 'privileged');
    const res = await decide(waiting.id, { call_id: call.call_id, decision: 'approve' });
    assert.equal(res.body.status, 'completed');
    assert.equal(toolResult(res.body.output)!.output, 'careful');
  });

  test('a risk the policy does not list runs without a decision', async () => {
    await createAgent(ctx, {
      name: 'ungated-echo',
      model: { provider: 'fake', script: [echoCall('free'), { text: 'done' }] },
      tools: [{ type: 'builtin', name: 'echo' }],
      approval: { risks: ['write', 'privileged'] },
    });
    const res = await respond(ctx, { model: 'ungated-echo', input: 'x' });
    assert.equal(res.status, 'completed');
    assert.equal(toolResult(res.output)!.output, 'free');
  });

  test('an approval nobody decides is denied automatically when its timeout passes, and the run goes on', async () => {
    await createAgent(ctx, {
      name: 'timed-approval',
      model: { provider: 'fake', script: [echoCall('too late'), { text: 'moved on' }] },
      tools: [{ type: 'builtin', name: 'echo' }],
      approval: { tools: ['echo'], timeout_seconds: 1 },
    });
    const started = Math.floor(Date.now() / 1000);
    const waiting = await respond(ctx, { model: 'timed-approval', input: 'x' });
    assert.equal(waiting.palai_status, 'waiting_for_approval');
    const [call] = waiting.required_action.calls;
    assert.equal(typeof call.approval_deadline, 'number');
    assert.ok(call.approval_deadline >= started && call.approval_deadline <= started + 3, `deadline ${call.approval_deadline}, started ${started}`);

    let current = waiting;
    for (const until = Date.now() + 6_000; current.palai_status === 'waiting_for_approval' && Date.now() < until;) {
      await sleep(100);
      current = await getResponse(waiting.id);
    }
    // It may be back in progress for the model step that follows.
    for (const until = Date.now() + 3_000; current.palai_status === 'in_progress' && Date.now() < until;) {
      await sleep(50);
      current = await getResponse(waiting.id);
    }
    assert.equal(current.palai_status, 'completed');
    const result = toolResult(current.output)!;
    assert.equal(result.call_id, call.call_id);
    const denial = JSON.parse(result.output);
    assert.equal(denial.denied, true);
    assert.match(denial.reason, /timed out/);
    assert.equal(current.output_text, 'moved on');
    await assertOneTerminalEvent(waiting.id, 'response.completed');

    const late = await decide(waiting.id, { call_id: call.call_id, decision: 'approve' });
    assertProblem(late, 409, 'invalid-state');
  });

  test('bad decisions: a call that is not waiting, a finished response, an unknown decision, deciding twice', async () => {
    await createAgent(ctx, {
      name: 'gated-bad-input',
      model: { provider: 'fake', script: [echoCall('once'), { text: 'done' }] },
      tools: [{ type: 'builtin', name: 'echo' }],
      approval: { tools: ['echo'] },
    });
    const waiting = await respond(ctx, { model: 'gated-bad-input', input: 'x' });
    const [call] = waiting.required_action.calls;
    const eventsBefore = await journal(waiting.id);

    const wrongCall = await decide(waiting.id, { call_id: 'call_not_there', decision: 'approve' });
    assertProblem(wrongCall, 409, 'invalid-state');
    assert.equal(wrongCall.body.errors[0].pointer, '/call_id');

    const maybe = await decide(waiting.id, { call_id: call.call_id, decision: 'maybe' });
    assertProblem(maybe, 400, 'validation-failed');
    assert.equal(maybe.body.errors[0].pointer, '/decision');

    const noDecision = await decide(waiting.id, { call_id: call.call_id });
    assertProblem(noDecision, 400, 'validation-failed');

    const unknown = await decide('resp_00000000000000000000000000', { call_id: call.call_id, decision: 'approve' });
    assertProblem(unknown, 404, 'not-found');

    const unchanged = await getResponse(waiting.id);
    assert.equal(unchanged.palai_status, 'waiting_for_approval');
    assert.deepEqual(unchanged.required_action, waiting.required_action);
    assert.deepEqual(unchanged, waiting, 'nothing changed');
    assert.deepEqual(await journal(waiting.id), eventsBefore);

    const first = await decide(waiting.id, { call_id: call.call_id, decision: 'approve' });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.status, 'completed');
    const second = await decide(waiting.id, { call_id: call.call_id, decision: 'approve' });
    assertProblem(second, 409, 'invalid-state');
    const deny = await decide(waiting.id, { call_id: call.call_id, decision: 'deny' });
    assertProblem(deny, 409, 'invalid-state');
    assert.deepEqual(await getResponse(waiting.id), first.body, 'the late decisions changed nothing');

    await createAgent(ctx, { name: 'plain', model: { provider: 'fake' } });
    const finished = await respond(ctx, { model: 'plain', input: 'x' });
    const onFinished = await decide(finished.id, { call_id: 'call_x', decision: 'approve' });
    assertProblem(onFinished, 409, 'invalid-state');
  });

  test('a second call waiting for approval keeps the response waiting after the first is decided', async () => {
    await createAgent(ctx, {
      name: 'two-gated',
      model: {
        provider: 'fake',
        script: [
          {
            tool_calls: [
              { name: 'echo', arguments: { text: 'first' } },
              { name: 'echo', arguments: { text: 'second' } },
            ],
          },
          { text: 'done' },
        ],
      },
      tools: [{ type: 'builtin', name: 'echo' }],
      approval: { tools: ['echo'] },
    });
    const waiting = await respond(ctx, { model: 'two-gated', input: 'x' });
    assert.equal(waiting.palai_status, 'waiting_for_approval');
    const [one, two] = waiting.required_action.calls;
    assert.equal(waiting.required_action.calls.length, 2);

    const afterOne = await decide(waiting.id, { call_id: one.call_id, decision: 'approve' });
    assert.equal(afterOne.body.palai_status, 'waiting_for_approval');
    assert.deepEqual(
      afterOne.body.required_action.calls.map((c: { call_id: string }) => c.call_id),
      [two.call_id],
    );
    assert.equal(toolResult(afterOne.body.output)!.output, 'first');
    const again = await decide(waiting.id, { call_id: one.call_id, decision: 'approve' });
    assertProblem(again, 409, 'invalid-state');

    const afterTwo = await decide(waiting.id, { call_id: two.call_id, decision: 'deny' });
    assert.equal(afterTwo.body.status, 'completed');
    const outputs = toolResults(afterTwo.body.output);
    assert.deepEqual(
      outputs.map((o: { call_id: string }) => o.call_id),
      [one.call_id, two.call_id],
    );
    assert.equal(JSON.parse(outputs[1].output).denied, true);
    await assertOneTerminalEvent(waiting.id, 'response.completed');
  });

  test('an approval and a client function in one step: approval first, then the tool output, then completed', async () => {
    await createAgent(ctx, {
      name: 'mixed',
      model: {
        provider: 'fake',
        script: [
          {
            tool_calls: [
              { name: 'echo', arguments: { text: 'gated' } },
              { name: 'get_weather', arguments: { city: 'Oslo' } },
            ],
          },
          { text: 'all done' },
        ],
      },
      tools: [
        { type: 'builtin', name: 'echo' },
        { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      ],
      approval: { tools: ['echo'] },
    });
    const waiting = await respond(ctx, { model: 'mixed', input: 'x' });
    assert.equal(waiting.palai_status, 'waiting_for_approval');
    assert.equal(waiting.required_action.type, 'approve_tool_calls');
    const echo = waiting.required_action.calls.find((c: { name: string }) => c.name === 'echo');
    assert.equal(echo.waiting_for, 'approval');
    assert.ok(
      waiting.required_action.calls.every((c: { name: string; waiting_for: string }) => c.name === 'echo' || c.waiting_for !== 'approval'),
      'only the echo call waits for approval',
    );

    const approved = await decide(waiting.id, { call_id: echo.call_id, decision: 'approve' });
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.palai_status, 'waiting_for_tool');
    assert.equal(approved.body.required_action.type, 'submit_tool_outputs');
    const [weather] = approved.body.required_action.calls;
    assert.equal(weather.name, 'get_weather');
    assert.equal(weather.waiting_for, 'tool_output');
    assert.equal(toolResults(approved.body.output).find((r) => r.call_id === echo.call_id)!.output, 'gated');

    const res = await ctx()
      .http.post(`/v1/responses/${waiting.id}/tool_outputs`)
      .set(ctx().auth)
      .send({ outputs: [{ call_id: weather.call_id, output: 'sunny' }] });
    assertMatchesSpec(res, 'submitToolOutputs');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'completed');
    assert.equal(res.body.output_text, 'all done');
    const outputs = toolResults(res.body.output);
    assert.deepEqual(outputs.map((o: { output: string }) => o.output).sort(), ['gated', 'sunny']);
    const events = await journal(waiting.id);
    const states = events.filter((e) => e.type.startsWith('response.waiting_for_')).map((e) => e.type);
    assert.deepEqual(states, ['response.waiting_for_approval', 'response.waiting_for_tool']);
    assert.equal(events.at(-1).type, 'response.completed');
  });
});
