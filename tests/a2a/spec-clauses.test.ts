// Clauses of the A2A 1.0 spec the TCK checks, through the SDK's client on both
// bindings: a push config deleted twice (§3.1.10, idempotent), the history of
// an input-required exchange (the agent's question and the client's answer),
// SubscribeToTask on an input-required task (§3.1.6: the stream goes on to the
// task's end), the card's caching headers (§8.6: max-age, ETag, conditional
// GET), HTTP+JSON's media type and error statuses (§11.1, §5.4), and an agent
// whose answers are A2A parts (files, data, a Message reply).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Role, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { a2aClient, BINDINGS, listen, partsText, send, userMessage, type Listening } from './a2a-client.js';

const ASKS = {
  name: 'asks',
  model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] }, { text: 'Blue it is.' }] },
  tools: [{ type: 'builtin', name: 'ask_user' }],
};

const FILE_PART = { url: 'https://example.com/output.txt', filename: 'output.txt', mediaType: 'text/plain' };

const stateOf = (event: StreamResponse): TaskState | undefined =>
  event.payload?.$case === 'task' ? event.payload.value.status?.state : event.payload?.$case === 'statusUpdate' ? event.payload.value.status?.state : undefined;

await describeEachStore(
  'A2A spec clauses the TCK checks',
  (ctx) => {
    let server: Listening;
    before(async () => {
      server = await listen(ctx().hub.app);
      await createAgent(ctx, ASKS);
      await createAgent(ctx, { name: 'plain', model: { provider: 'fake' } });
      await createAgent(ctx, {
        name: 'parts',
        metadata: { a2a_answer: 'parts' },
        model: {
          provider: 'fake',
          script_choices: [
            { when: { input_prefix: 'file' }, step: { json: { parts: [FILE_PART] } } },
            { when: { input_prefix: 'reply' }, step: { json: { reply: 'message', parts: [{ text: 'Directly.' }] } } },
          ],
        },
      });
    });
    after(() => server.close());

    for (const binding of BINDINGS) {
      test(`[${binding}] deleting a push config twice succeeds both times; an unknown task is still TaskNotFound`, async () => {
        const client = await a2aClient(server.url, 'plain', ctx().apiKey, binding);
        const task = (await client.sendMessage(send(userMessage('hello')))) as Task;
        await client.createTaskPushNotificationConfig({
          tenant: '',
          id: 'cfg-del',
          taskId: task.id,
          url: 'https://example.com/hook',
          token: '',
          authentication: undefined,
        });
        await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-del' });
        await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-del' });
        const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
        assert.deepEqual(listed.configs, []);
        await assert.rejects(
          client.deleteTaskPushNotificationConfig({ tenant: '', taskId: 'resp_00000000000000000000000000', id: 'cfg-del' }),
          (error: Error) => error.name === 'TaskNotFoundError',
        );
      });

      test(`[${binding}] the history of an input-required exchange holds the question and the answer, in order`, async () => {
        const client = await a2aClient(server.url, 'asks', ctx().apiKey, binding);
        const first = userMessage('Paint the shed.');
        const waiting = (await client.sendMessage(send(first))) as Task;
        assert.equal(waiting.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
        const done = (await client.sendMessage(send(userMessage('Blue', { taskId: waiting.id })))) as Task;
        assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
        const read = await client.getTask({ tenant: '', id: done.id });
        assert.deepEqual(
          read.history.map((m) => [m.role, partsText(m.parts)]),
          [
            [Role.ROLE_USER, 'Paint the shed.'],
            [Role.ROLE_AGENT, 'Which colour?'],
            [Role.ROLE_USER, 'Blue'],
            [Role.ROLE_AGENT, 'Blue it is.'],
          ],
        );
        assert.equal(read.history[0].messageId, first.messageId);
        const last = await client.getTask({ tenant: '', id: done.id, historyLength: 2 });
        assert.deepEqual(
          last.history.map((m) => partsText(m.parts)),
          ['Blue', 'Blue it is.'],
        );
      });

      test(`[${binding}] SubscribeToTask on an input-required task: the task first, then its updates until it completes`, async () => {
        const client = await a2aClient(server.url, 'asks', ctx().apiKey, binding);
        const waiting = (await client.sendMessage(send(userMessage('Paint the gate.')))) as Task;
        assert.equal(waiting.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
        const events = client.resubscribeTask({ tenant: '', id: waiting.id });
        const first = await events.next();
        assert.equal(first.done, false);
        assert.equal(first.value?.payload?.$case, 'task');
        assert.equal(stateOf(first.value!), TaskState.TASK_STATE_INPUT_REQUIRED);
        // Answered only once the subscription stands, so what follows is live.
        await client.sendMessage(send(userMessage('Green', { taskId: waiting.id }), { returnImmediately: true }));
        const states: (TaskState | undefined)[] = [];
        for await (const event of events) if (event.payload?.$case === 'statusUpdate') states.push(stateOf(event));
        assert.equal(states.at(-1), TaskState.TASK_STATE_COMPLETED, `the stream ends with the task's end: ${states.join(', ')}`);
        assert.ok(states.includes(TaskState.TASK_STATE_WORKING));
      });
    }

    for (const binding of BINDINGS) {
      test(`[${binding}] a parts agent: a parts answer is a file artifact, also streamed; "reply": "message" is a Message; other text stays text`, async () => {
        const client = await a2aClient(server.url, 'parts', ctx().apiKey, binding);
        const file = (await client.sendMessage(send(userMessage('file please')))) as Task;
        assert.equal(file.status?.state, TaskState.TASK_STATE_COMPLETED);
        const part = file.artifacts[0].parts[0];
        assert.deepEqual([part.content, part.filename, part.mediaType], [{ $case: 'url', value: FILE_PART.url }, 'output.txt', 'text/plain']);
        const streamed: StreamResponse[] = [];
        for await (const event of client.sendMessageStream(send(userMessage('file again')))) streamed.push(event);
        // The run may have ended before the stream's first event (the task, with its artifact) or after it.
        const shown = streamed.flatMap((e) =>
          e.payload?.$case === 'artifactUpdate'
            ? [e.payload.value.artifact?.parts[0]?.content]
            : e.payload?.$case === 'task'
              ? e.payload.value.artifacts.map((a) => a.parts[0]?.content)
              : [],
        );
        assert.deepEqual(shown, [{ $case: 'url', value: FILE_PART.url }], 'the file is shown once, whole, and its JSON never as text');
        const reply = await client.sendMessage(send(userMessage('reply please')));
        assert.ok(!('status' in reply), 'a Message, not a Task');
        assert.equal(partsText(reply.parts), 'Directly.');
        assert.equal(reply.role, Role.ROLE_AGENT);
        const echo = (await client.sendMessage(send(userMessage('just text')))) as Task;
        assert.equal(partsText(echo.artifacts[0].parts), 'just text');
      });
    }

    test('HTTP+JSON answers application/json (§11.1); a file part is 415, the cancel of an ended task 409 (§5.4), in the SDK error body', async () => {
      const rest = (path: string) => ctx().http.post(`/a2a/plain/rest${path}`).set(ctx().auth).set('A2A-Version', '1.0');
      const sent = await rest('/message:send').send({ message: { role: 'ROLE_USER', messageId: 'wire-1', parts: [{ text: 'hi' }] } });
      assert.equal(sent.status, 200, sent.text);
      assert.match(sent.headers['content-type'], /^application\/json/);
      const file = await rest('/message:send').send({
        message: { role: 'ROLE_USER', messageId: 'wire-2', parts: [{ url: 'https://example.com/a.pdf', mediaType: 'application/pdf' }] },
      });
      assert.equal(file.status, 415, file.text);
      assert.match(file.headers['content-type'], /^application\/json/);
      assert.equal(file.body.error.code, 415);
      assert.equal(file.body.error.details[0].reason, 'CONTENT_TYPE_NOT_SUPPORTED');
      const cancel = await rest(`/tasks/${sent.body.task.id}:cancel`).send({});
      assert.equal(cancel.status, 409, cancel.text);
      assert.equal(cancel.body.error.details[0].reason, 'TASK_NOT_CANCELABLE');
    });

    test('the card is cacheable (private, max-age), has an ETag and a Last-Modified, and a conditional GET is 304', async () => {
      const url = `${server.url}/a2a/plain/.well-known/agent-card.json`;
      const headers = { authorization: `Bearer ${ctx().apiKey}`, 'a2a-version': '1.0' };
      const answer = await fetch(url, { headers });
      assert.equal(answer.status, 200);
      assert.match(answer.headers.get('cache-control') ?? '', /^private, max-age=\d+$/);
      const etag = answer.headers.get('etag');
      assert.ok(etag, 'an ETag');
      const lastModified = answer.headers.get('last-modified');
      assert.ok(lastModified && Number.isFinite(Date.parse(lastModified)), 'a Last-Modified date');
      await answer.arrayBuffer();
      // fetch adds Cache-Control: no-cache to a conditional request (which asks for a full answer) unless told otherwise.
      const conditional = { ...headers, 'cache-control': 'max-age=0' };
      const again = await fetch(url, { headers: { ...conditional, 'if-none-match': etag } });
      assert.equal(again.status, 304);
      const since = await fetch(url, { headers: { ...conditional, 'if-modified-since': lastModified } });
      assert.equal(since.status, 304);
    });
  },
  { secretKey: 'a2a-spec-clauses-secret' },
);
