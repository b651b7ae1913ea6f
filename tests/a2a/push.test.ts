// A2A push notifications through the outbox: configs are kept as outbox
// subscriptions of the task, and each status change is POSTed to the config's
// URL with its token and credentials, retried until the receiver answers 2xx.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TaskState, type Task } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { a2aClient, BINDINGS, listen, send, userMessage, type Listening } from './a2a-client.js';
import { announcedState, startReceiver, until } from './push-receiver.js';

await describeEachStore(
  'A2A push notifications',
  (ctx) => {
    let server: Listening;
    before(async () => {
      server = await listen(ctx().hub.app);
      await createAgent(ctx, { name: 'pushy', model: { provider: 'fake' } });
      await createAgent(ctx, {
        name: 'asks',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Sure?' } }] }, { text: 'ok' }] },
        tools: [{ type: 'builtin', name: 'ask_user' }],
      });
    });
    after(() => server.close());

    test('the card offers push notifications', async () => {
      const card = await (await a2aClient(server.url, 'pushy', ctx().apiKey, 'JSONRPC')).getAgentCard();
      assert.equal(card.capabilities?.pushNotifications, true);
    });

    for (const binding of BINDINGS) {
      test(`[${binding}] a config given with the message: the receiver fails twice, then gets the completed task with the token and credentials`, async () => {
        const receiver = await startReceiver(2);
        try {
          const client = await a2aClient(server.url, 'pushy', ctx().apiKey, binding);
          const task = (await client.sendMessage(
            send(userMessage('push me'), {
              taskPushNotificationConfig: {
                tenant: '',
                id: '',
                taskId: '',
                url: receiver.url,
                token: 'tok-123',
                authentication: { scheme: 'Bearer', credentials: 'cred-456' },
              },
            }),
          )) as Task;
          assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
          const completed = await until('a delivered completion', () =>
            receiver.seen.find((n) => n.status === 200 && announcedState(n) === 'TASK_STATE_COMPLETED' && n.body.task),
          );
          assert.equal(completed.body.task.id, task.id);
          assert.equal(completed.body.task.artifacts[0].parts[0].text, 'push me');
          assert.equal(completed.headers['x-a2a-notification-token'], 'tok-123');
          assert.equal(completed.headers.authorization, 'Bearer cred-456');
          assert.equal(completed.headers['content-type'], 'application/a2a+json');
          assert.deepEqual(
            receiver.seen.slice(0, 2).map((n) => n.status),
            [500, 500],
            'the first two attempts failed and were retried',
          );
          const retried = receiver.seen.filter((n) => n.headers['a2a-notification-id'] === completed.headers['a2a-notification-id']);
          assert.ok(retried.length >= 1);
        } finally {
          await receiver.close();
        }
      });
    }

    test('configs of a task: created, read back without their secrets, listed, deleted; each status change is announced', async () => {
      const receiver = await startReceiver(0);
      try {
        const client = await a2aClient(server.url, 'asks', ctx().apiKey, 'JSONRPC');
        const task = (await client.sendMessage(send(userMessage('go')))) as Task;
        assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
        const created = await client.createTaskPushNotificationConfig({
          tenant: '',
          id: 'cfg-1',
          taskId: task.id,
          url: receiver.url,
          token: 'secret-token',
          authentication: undefined,
        });
        assert.equal(created.id, 'cfg-1');
        assert.equal(created.token, '', 'the token is write-only');
        const read = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
        assert.equal(read.url, receiver.url);
        const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
        assert.deepEqual(
          listed.configs.map((c) => c.id),
          ['cfg-1'],
        );

        await client.sendMessage(send(userMessage('yes', { taskId: task.id })));
        await until('working and completed announced', () => {
          const states = receiver.seen.map(announcedState);
          return states.includes('TASK_STATE_WORKING') && states.includes('TASK_STATE_COMPLETED');
        });
        assert.ok(receiver.seen.every((n) => n.headers['x-a2a-notification-token'] === 'secret-token'));

        await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
        await assert.rejects(client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' }), TaskNotFoundError);
      } finally {
        await receiver.close();
      }
    });
  },
  { secretKey: 'a2a-push-test-secret' },
);
