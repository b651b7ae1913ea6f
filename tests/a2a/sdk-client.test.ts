// The official @a2a-js/sdk client against Palai agents, over JSON-RPC and over
// HTTP+JSON: a task is a response, a context a session, streams come from the
// journal, a messageId is an idempotency key, and a waiting run is answered by
// a message to its task.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { TaskNotCancelableError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { Client } from '@a2a-js/sdk/client';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { a2aClient, BINDINGS, data, listen, partsText, send, userMessage, type Binding, type Listening } from './a2a-client.js';
import { toolResult } from '../support/tool-results.js';

const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');

/** The answer's text as a stream reader assembles it: the task's artifact, then each update (append or replace). */
function assembled(events: StreamResponse[]): string {
  let answer = '';
  for (const { payload } of events) {
    if (payload?.$case === 'task') answer = payload.value.artifacts.map((a) => partsText(a.parts)).join('');
    if (payload?.$case === 'artifactUpdate') {
      const chunk = partsText(payload.value.artifact!.parts);
      answer = payload.value.append ? answer + chunk : chunk;
    }
  }
  return answer;
}

const stateOf = (e: StreamResponse): TaskState | undefined =>
  e.payload?.$case === 'task' ? e.payload.value.status?.state : e.payload?.$case === 'statusUpdate' ? e.payload.value.status?.state : undefined;

const answerText = (task: Task): string => task.artifacts.map((a) => partsText(a.parts)).join('');

await describeEachStore('A2A through the SDK client', (ctx) => {
  let server: Listening;
  before(async () => {
    server = await listen(ctx().hub.app);
    await createAgent(ctx, { name: 'echo', model: { provider: 'fake' } });
    await createAgent(ctx, { name: 'slow', model: { provider: 'fake', script: [{ text: words(30), delay_ms: 60 }] } });
    await createAgent(ctx, { name: 'long', model: { provider: 'fake', script: [{ text: words(200), delay_ms: 50 }] } });
  });
  after(() => server.close());

  const client = (agent: string, binding: Binding): Promise<Client> => a2aClient(server.url, agent, ctx().apiKey, binding);
  const restGet = async (path: string) => {
    const res = await ctx().http.get(path).set(ctx().auth);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const responseCount = async (agent: string): Promise<number> => (await restGet(`/v1/responses?agent=${agent}&limit=100`)).data.length;

  const untilSettled = async (c: Client, id: string): Promise<Task> => {
    for (let i = 0; i < 200; i++) {
      const task = await c.getTask({ tenant: '', id });
      const state = task.status?.state;
      if (
        state === TaskState.TASK_STATE_COMPLETED ||
        state === TaskState.TASK_STATE_INPUT_REQUIRED ||
        state === TaskState.TASK_STATE_CANCELED ||
        state === TaskState.TASK_STATE_FAILED
      )
        return task;
      await sleep(50);
    }
    throw new Error(`task ${id} did not settle`);
  };

  for (const binding of BINDINGS) {
    test(`[${binding}] a blocking send answers with the completed task: its id is the response, its context the session`, async () => {
      const c = await client('echo', binding);
      const message = userMessage('hello from a2a');
      const task = (await c.sendMessage(send(message))) as Task;
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
      assert.match(task.id, /^resp_/);
      assert.match(task.contextId, /^ses_/);
      assert.equal(answerText(task), 'hello from a2a');
      assert.equal(task.metadata?.palai_status, 'completed');
      assert.equal(task.history[0].messageId, message.messageId, 'the client message keeps its id in the history');
      const response = await restGet(`/v1/responses/${task.id}`);
      assert.equal(response.session_id, task.contextId);
      assert.equal(response.output_text, 'hello from a2a');
    });

    test(`[${binding}] a non-blocking send returns at once; GetTask follows it and trims its history`, async () => {
      const c = await client('slow', binding);
      const task = (await c.sendMessage(send(userMessage('go'), { returnImmediately: true }))) as Task;
      assert.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(task.status!.state), String(task.status?.state));
      const done = await untilSettled(c, task.id);
      assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(answerText(done), words(30));
      assert.equal(done.history.length, 2);
      const one = await c.getTask({ tenant: '', id: task.id, historyLength: 1 });
      assert.equal(one.history.length, 1);
      assert.equal(partsText(one.history[0].parts), words(30), 'the most recent message');
      const none = await c.getTask({ tenant: '', id: task.id, historyLength: 0 });
      assert.equal(none.history.length, 0);
    });

    test(`[${binding}] a stream starts with the task, then its updates in order; the appended chunks are the answer`, async () => {
      const c = await client('slow', binding);
      const events: StreamResponse[] = [];
      for await (const event of c.sendMessageStream(send(userMessage('stream it')))) events.push(event);
      assert.equal(events[0].payload?.$case, 'task');
      assert.ok(
        events.slice(1).every((e) => e.payload?.$case !== 'task'),
        'one task, first',
      );
      const states = events.map(stateOf).filter((s) => s !== undefined);
      assert.equal(states.at(-1), TaskState.TASK_STATE_COMPLETED);
      assert.equal(states.filter((s) => s === TaskState.TASK_STATE_COMPLETED).length, 1, 'one terminal update');
      const appends = events.filter((e) => e.payload?.$case === 'artifactUpdate');
      assert.ok(appends.length >= 10, `the answer streams (${appends.length} updates)`);
      assert.equal(assembled(events), words(30));
      const taskId = (events[0].payload!.value as Task).id;
      assert.equal(answerText(await c.getTask({ tenant: '', id: taskId })), words(30));
    });

    test(`[${binding}] a context goes on over several tasks, and ListTasks finds them by contextId`, async () => {
      const c = await client('echo', binding);
      const first = (await c.sendMessage(send(userMessage('first turn')))) as Task;
      const second = (await c.sendMessage(send(userMessage('second turn', { contextId: first.contextId })))) as Task;
      assert.equal(second.contextId, first.contextId);
      assert.notEqual(second.id, first.id);
      const items = await restGet(`/v1/sessions/${first.contextId}/items?limit=100`);
      assert.equal(items.data.length, 4, 'both turns are in the session');
      const listed = await c.listTasks({
        tenant: '',
        contextId: first.contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 1,
        pageToken: '',
        statusTimestampAfter: undefined,
      });
      assert.deepEqual(
        listed.tasks.map((t) => t.id),
        [second.id],
        'newest first',
      );
      assert.equal(listed.totalSize, 2, 'totalSize counts every matching task, not just this page');
      assert.notEqual(listed.nextPageToken, '');
      const next = await c.listTasks({
        tenant: '',
        contextId: first.contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 1,
        pageToken: listed.nextPageToken,
        statusTimestampAfter: undefined,
      });
      assert.deepEqual(
        next.tasks.map((t) => t.id),
        [first.id],
      );
      assert.equal(next.nextPageToken, '');
      const completed = await c.listTasks({
        tenant: '',
        contextId: first.contextId,
        status: TaskState.TASK_STATE_COMPLETED,
        pageToken: '',
        statusTimestampAfter: undefined,
      });
      assert.equal(completed.tasks.length, 2);
      const working = await c.listTasks({
        tenant: '',
        contextId: first.contextId,
        status: TaskState.TASK_STATE_WORKING,
        pageToken: '',
        statusTimestampAfter: undefined,
      });
      assert.equal(working.tasks.length, 0);
      assert.equal(working.totalSize, 0);
      const since = (ms: number) => new Date(Date.now() + ms).toISOString();
      const recent = await c.listTasks({
        tenant: '',
        contextId: first.contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageToken: '',
        statusTimestampAfter: since(-60_000),
      });
      assert.equal(recent.tasks.length, 2, 'both changed status within the last minute');
      const future = await c.listTasks({
        tenant: '',
        contextId: first.contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageToken: '',
        statusTimestampAfter: since(60_000),
      });
      assert.equal(future.tasks.length, 0, 'none changed status after a time to come');
      assert.ok(Date.parse(String(second.status?.timestamp)) >= Date.parse(String(first.status?.timestamp)), 'a task status carries when it changed');
    });

    test(`[${binding}] cancel stops a running task; a finished task is not cancelable`, async () => {
      const c = await client('long', binding);
      const task = (await c.sendMessage(send(userMessage('go'), { returnImmediately: true }))) as Task;
      await sleep(300);
      const canceled = await c.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
      await assert.rejects(c.cancelTask({ tenant: '', id: task.id, metadata: undefined }), (e: unknown) => e instanceof TaskNotCancelableError);
      const echo = await client('echo', binding);
      const done = (await echo.sendMessage(send(userMessage('x')))) as Task;
      await assert.rejects(echo.cancelTask({ tenant: '', id: done.id, metadata: undefined }), (e: unknown) => e instanceof TaskNotCancelableError);
    });

    test(`[${binding}] a subscriber joining mid-run gets the task so far, then the rest once`, async () => {
      const c = await client('slow', binding);
      const task = (await c.sendMessage(send(userMessage('go'), { returnImmediately: true }))) as Task;
      await sleep(600);
      const events: StreamResponse[] = [];
      for await (const event of c.resubscribeTask({ tenant: '', id: task.id })) events.push(event);
      assert.equal(events[0].payload?.$case, 'task');
      const first = events[0].payload!.value as Task;
      assert.equal(first.status?.state, TaskState.TASK_STATE_WORKING);
      assert.ok(answerText(first).length > 0, 'some words were already there');
      assert.equal(stateOf(events.at(-1)!), TaskState.TASK_STATE_COMPLETED);
      assert.equal(assembled(events), words(30), 'nothing twice, nothing missing');
      await assert.rejects(
        (async () => {
          for await (const _ of c.resubscribeTask({ tenant: '', id: task.id })) void _;
        })(),
        (e: unknown) => e instanceof UnsupportedOperationError,
        'a finished task has nothing to subscribe to',
      );
    });

    test(`[${binding}] input-required: the agent's question, answered by a message to the task`, async () => {
      await createAgent(ctx, {
        name: `asker-${binding === 'JSONRPC' ? 'rpc' : 'rest'}`,
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which city?' } }] }, { text: 'noted' }] },
        tools: [{ type: 'builtin', name: 'ask_user' }],
      });
      const c = await client(`asker-${binding === 'JSONRPC' ? 'rpc' : 'rest'}`, binding);
      const waiting = (await c.sendMessage(send(userMessage('weather?')))) as Task;
      assert.equal(waiting.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal(waiting.metadata?.palai_status, 'waiting_for_input');
      const question = waiting.status!.message!;
      assert.equal(partsText(question.parts), 'Which city?');
      const asked = question.parts.find((p) => p.content?.$case === 'data')!.content!.value as { waiting_for: string; calls: Array<{ call_id: string }> };
      assert.equal(asked.waiting_for, 'input');
      const answered = (await c.sendMessage(send(userMessage('Oslo', { taskId: waiting.id, contextId: waiting.contextId })))) as Task;
      assert.equal(answered.id, waiting.id, 'the same task goes on');
      assert.equal(answered.status?.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(answerText(answered), 'noted');
      const response = await restGet(`/v1/responses/${waiting.id}`);
      // ask_user is Palai's to run: REST shows it as an mcp_call whose output is the answer.
      const output = toolResult(response.output)!;
      assert.equal(output.call_id, asked.calls[0].call_id);
      assert.equal(output.output, 'Oslo');
    });

    test(`[${binding}] a resent messageId answers with the same task and runs nothing again`, async () => {
      const c = await client('echo', binding);
      const before = await responseCount('echo');
      const message = userMessage('only once');
      const first = (await c.sendMessage(send(message))) as Task;
      const again = (await c.sendMessage(send(message))) as Task;
      assert.equal(again.id, first.id);
      assert.equal(again.contextId, first.contextId);
      const events: StreamResponse[] = [];
      for await (const event of c.sendMessageStream(send(message))) events.push(event);
      assert.equal((events[0].payload!.value as Task).id, first.id, 'also when resent as a stream');
      assert.equal(await responseCount('echo'), before + 1);
    });
  }

  test('an approval is answered with a data part; client tool outputs too', async () => {
    await createAgent(ctx, {
      name: 'gated',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'ok to run' } }] }, { text: 'done' }] },
      tools: [{ type: 'builtin', name: 'echo' }],
      approval: { tools: ['echo'] },
    });
    const c = await client('gated', 'JSONRPC');
    const waiting = (await c.sendMessage(send(userMessage('x')))) as Task;
    assert.equal(waiting.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(waiting.metadata?.palai_status, 'waiting_for_approval');
    const approved = (await c.sendMessage(send(userMessage([data({ decision: 'approve' })], { taskId: waiting.id })))) as Task;
    assert.equal(approved.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(answerText(approved), 'done');

    await createAgent(ctx, {
      name: 'weather',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, { text: 'sunny it is' }] },
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    const w = await client('weather', 'HTTP+JSON');
    const toolWait = (await w.sendMessage(send(userMessage('weather?')))) as Task;
    assert.equal(toolWait.metadata?.palai_status, 'waiting_for_tool');
    const call = (
      toolWait.status!.message!.parts.find((p) => p.content?.$case === 'data')!.content!.value as {
        calls: Array<{ call_id: string; name: string; arguments: unknown }>;
      }
    ).calls[0];
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(call.arguments, { city: 'Oslo' });
    const done = (await w.sendMessage(
      send(userMessage([data({ tool_outputs: [{ call_id: call.call_id, output: { sky: 'clear' } }] })], { taskId: toolWait.id })),
    )) as Task;
    assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(answerText(done), 'sunny it is');
    const response = await restGet(`/v1/responses/${toolWait.id}`);
    assert.equal(response.output.find((i: { type: string }) => i.type === 'function_call_output').output, '{"sky":"clear"}');
  });

  test('an agent with an output schema answers with a data part', async () => {
    await createAgent(ctx, {
      name: 'structured',
      model: { provider: 'fake', script: [{ json: { city: 'Oslo', temp: 3 } }] },
      output_schema: { type: 'object', properties: { city: { type: 'string' }, temp: { type: 'number' } }, required: ['city', 'temp'] },
    });
    const c = await client('structured', 'JSONRPC');
    const task = (await c.sendMessage(send(userMessage('x')))) as Task;
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    const [part] = task.artifacts[0].parts;
    assert.equal(part.content?.$case, 'data');
    assert.deepEqual(part.content?.value, { city: 'Oslo', temp: 3 });
    const events: StreamResponse[] = [];
    for await (const event of c.sendMessageStream(send(userMessage('y')))) events.push(event);
    // The stream starts with the task as it stands: a fast run may have finished by then, its artifact in the task.
    const first = events[0]?.payload;
    assert.equal(first?.$case, 'task');
    const artifacts = [
      ...(first?.$case === 'task' ? first.value.artifacts : []),
      ...events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' && e.payload.value.artifact ? [e.payload.value.artifact] : [])),
    ];
    assert.equal(artifacts.length, 1, 'one data artifact, whole, never built up in pieces');
    assert.equal(artifacts[0].parts[0].content?.$case, 'data');
  });

  test('a v0.3 client works through the compatibility layer', async () => {
    const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } = await import('@a2a-js/sdk/client');
    const { keyedFetch } = await import('./a2a-client.js');
    const fetchImpl = keyedFetch(ctx().apiKey);
    const card = await new DefaultAgentCardResolver({ fetchImpl }).resolve(`${server.url}/a2a/echo/`);
    for (const binding of BINDINGS) {
      const legacyCard = { ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3' && i.protocolBinding === binding) };
      assert.equal(legacyCard.supportedInterfaces.length, 1);
      const factory = new ClientFactory({
        transports: [
          new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
          new RestTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
        ],
      });
      const c = await factory.createFromAgentCard(legacyCard);
      assert.equal(c.protocolVersion, '0.3');
      const task = (await c.sendMessage(send(userMessage(`legacy ${binding}`)))) as Task;
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, binding);
      assert.equal(answerText(task), `legacy ${binding}`);
      const again = await c.getTask({ tenant: '', id: task.id });
      assert.equal(again.id, task.id);
    }
  });
});
