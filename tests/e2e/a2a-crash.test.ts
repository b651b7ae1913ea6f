// A2A across a kill -9 and a restart of `palai serve` on one PostgreSQL database:
// a client resubscribes to its task on the new process and gets the task as it
// stands, then the rest, nothing twice; a call to a remote A2A agent (the SDK's
// own DefaultRequestHandler) that was in flight resumes from its committed task
// id instead of sending the message again; and a push notification the killed
// process could not deliver is delivered by the new one.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { cleanUpProcesses } from '../support/cli.js';
import { freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';
import { toolResult } from '../support/tool-results.js';
import { a2aClient, partsText, send, userMessage } from '../a2a/a2a-client.js';
import { startPeerAgent, type PeerAgent } from '../a2a/peer-agent.js';
import { announcedState, startReceiver } from '../a2a/push-receiver.js';
import {
  API_KEY,
  api,
  baseOf,
  clusterEnv,
  createAgent,
  createBackground,
  kill9,
  logsOf,
  startHub,
  waitForTerminal,
  waitUntil,
  words,
  type HubProcess,
} from './cluster.js';

const postgresReason = await postgresUnavailable();

after(cleanUpProcesses);

/** The answer as a stream reader assembles it: the task's artifact, then each append or replacement. */
function assemble(answer: string, event: StreamResponse): string {
  const { payload } = event;
  if (payload?.$case === 'task') return payload.value.artifacts.map((a) => partsText(a.parts)).join('');
  if (payload?.$case === 'artifactUpdate') {
    const chunk = partsText(payload.value.artifact!.parts);
    return payload.value.append ? answer + chunk : chunk;
  }
  return answer;
}

describe('A2A across a kill -9 and a restart [postgres]', { skip: postgresReason ?? false }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | null = null;
  let peer: PeerAgent;
  const nodes: HubProcess[] = [];

  before(async () => {
    database = await freshPostgresDatabase();
    peer = await startPeerAgent({ name: 'peer' });
  });
  after(async () => {
    cleanUpProcesses();
    await peer.close();
    await database?.drop();
  });

  const env = () => clusterEnv(database!.url, { PALAI_BOOTSTRAP_API_KEY: API_KEY, PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1', PALAI_SECRET_KEY: 'a2a-e2e-secret' });
  const start = async (name: string) => {
    const node = await startHub(name, 'all', env());
    nodes.push(node);
    return node;
  };
  const withLogs = async (body: () => Promise<void>) => {
    try {
      await body();
    } catch (error) {
      if (error instanceof Error) error.message += `\n${logsOf(...nodes)}`;
      throw error;
    } finally {
      cleanUpProcesses();
      nodes.length = 0;
    }
  };

  test('SubscribeToTask after the process running the task was killed: the new process gives the task, then the rest, once', { timeout: 120_000 }, () =>
    withLogs(async () => {
      const text = words(60);
      const a = await start('A');
      await createAgent(baseOf(a), { name: 'slow', model: { provider: 'fake', script: [{ text, delay_ms: 80 }] } });
      const clientA = await a2aClient(baseOf(a), 'slow', API_KEY, 'JSONRPC');
      const task = (await clientA.sendMessage(send(userMessage('go'), { returnImmediately: true }))) as Task;

      let before = '';
      for await (const event of clientA.resubscribeTask({ tenant: '', id: task.id })) {
        before = assemble(before, event);
        if (before.split(' ').length >= 10) break;
      }
      await kill9(a);
      const b = await start('B');
      const clientB = await a2aClient(baseOf(b), 'slow', API_KEY, 'HTTP+JSON');
      const events: StreamResponse[] = [];
      let answer = '';
      for await (const event of clientB.resubscribeTask({ tenant: '', id: task.id })) {
        events.push(event);
        answer = assemble(answer, event);
      }
      assert.equal(events[0].payload?.$case, 'task', 'the task comes first');
      assert.ok(text.startsWith(before), 'A streamed a prefix');
      assert.equal(answer, text, 'the answer is whole, with nothing twice');
      const last = events.at(-1)!;
      assert.equal(last.payload?.$case === 'statusUpdate' ? last.payload.value.status?.state : undefined, TaskState.TASK_STATE_COMPLETED);
      const final = await clientB.getTask({ tenant: '', id: task.id });
      assert.equal(final.status?.state, TaskState.TASK_STATE_COMPLETED);
    }),
  );

  test('Palai killed mid-call to a remote agent: the new process resumes the remote task; the message is sent once', { timeout: 120_000 }, () =>
    withLogs(async () => {
      const a = await start('A');
      const registered = await api(baseOf(a), 'POST', '/v1/remote_agents', {
        name: 'peer',
        card_url: peer.cardUrl,
        headers: { 'X-Peer-Key': 'peer-key-1234567890' },
      });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      await createAgent(baseOf(a), {
        name: 'delegator',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'a2a__peer', arguments: { message: 'hold:the long job' } }] }, { text: 'done' }] },
        tools: [{ type: 'a2a', remote_agent: 'peer' }],
      });
      const before = peer.executor.received.length;
      const created = await createBackground(baseOf(a), 'delegator', 'go');
      await waitUntil('the remote agent received the message', 30_000, () => peer.executor.holding === 1);
      const db = new pg.Client({ connectionString: database!.url });
      await db.connect();
      try {
        const committed = await waitUntil('the remote task id committed', 10_000, async () => {
          const { rows } = await db.query<{ checkpoint: { task_id: string } | null }>('SELECT checkpoint FROM tool_calls WHERE response_id = $1', [created.id]);
          return rows[0]?.checkpoint ?? null;
        });
        assert.equal(committed.task_id, peer.executor.received.at(-1)!.taskId);

        await kill9(a);
        const b = await start('B');
        peer.executor.release();
        const final = await waitForTerminal(baseOf(b), created.id, 60_000);
        assert.equal(final.palai_status, 'completed', JSON.stringify(final));
        const output = toolResult(final.output)!;
        assert.equal(output.output, 'peer says: the long job');
        const sent = peer.executor.received.slice(before);
        assert.equal(sent.length, 1, 'the message was sent once, crash or not');
        assert.equal(sent[0].headers['x-peer-key'], 'peer-key-1234567890');
        const { rows } = await db.query<{ attempts: number }>('SELECT attempts FROM tool_calls WHERE response_id = $1', [created.id]);
        assert.equal(rows[0].attempts, 2, 'the call ran again after the takeover, from its checkpoint');
      } finally {
        await db.end();
      }
    }),
  );

  test('a push notification the killed process could not deliver is delivered after the restart', { timeout: 120_000 }, () =>
    withLogs(async () => {
      const receiver = await startReceiver(Number.MAX_SAFE_INTEGER);
      try {
        const a = await start('A');
        await createAgent(baseOf(a), { name: 'pushy', model: { provider: 'fake' } });
        const client = await a2aClient(baseOf(a), 'pushy', API_KEY, 'JSONRPC');
        const task = (await client.sendMessage(
          send(userMessage('ping'), {
            taskPushNotificationConfig: { tenant: '', id: 'cfg', taskId: '', url: receiver.url, token: 'e2e-token', authentication: undefined },
          }),
        )) as Task;
        assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
        await waitUntil('two failed attempts', 30_000, () => receiver.seen.length >= 2);
        await kill9(a);
        receiver.succeed();
        await start('B');
        const delivered = await waitUntil('the completion delivered by B', 60_000, () =>
          receiver.seen.find((n) => n.status === 200 && announcedState(n) === 'TASK_STATE_COMPLETED'),
        );
        assert.equal(delivered.headers['x-a2a-notification-token'], 'e2e-token');
        assert.ok(receiver.seen.filter((n) => n.status === 500).length >= 2, 'it failed at least twice first');
      } finally {
        await receiver.close();
      }
    }),
  );
});
