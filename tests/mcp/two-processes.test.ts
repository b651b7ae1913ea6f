// One MCP session, two `palai serve` processes on one PostgreSQL database: the
// host initializes on one, every later request goes to the next process in
// turn (a load balancer with no affinity), and a tools/call stream cut on one
// process — or lost with the process, SIGKILLed mid-run — is resumed on the
// other from the journal. A resource subscribed on one process is announced
// by the session's stream on the other.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { CallToolResultSchema, CreateTaskResultSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { API_KEY, api, baseOf, getResponse, kill9, useCluster, waitForTerminal, waitUntil } from '../e2e/cluster.js';
import { cleanUpProcesses } from '../support/cli.js';
import { postgresUnavailable } from '../support/stores.js';
import { balancer, connect, watchingStandaloneStream, type FetchLike } from './mcp-client.js';

const postgresReason = await postgresUnavailable();
const WORDS = 'one two three four five six seven eight nine ten eleven twelve';

after(cleanUpProcesses);

describe('MCP across two palai serve processes [postgres]', { skip: postgresReason ?? false }, () => {
  const cluster = useCluster();

  test('a session opened on one process is served by both, and a dropped stream resumes on the other', { timeout: 120_000 }, async () => {
    const [a, b] = await Promise.all([cluster.start('a', 'all'), cluster.start('b', 'all')]);
    const created = await api(baseOf(a), 'POST', '/v1/agents', { name: 'talker', model: { provider: 'fake', script: [{ text: WORDS, delay_ms: 60 }] } });
    assert.equal(created.status, 201, JSON.stringify(created.body));

    const lb = balancer([baseOf(a), baseOf(b)], 4);
    const { client } = await connect(baseOf(a), API_KEY, { fetch: lb.fetch });
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['talker'],
    );
    const progress: number[] = [];
    const result = await client.callTool({ name: 'talker', arguments: { input: 'go' } }, CallToolResultSchema, {
      onprogress: (p) => progress.push(p.progress),
    });
    assert.deepEqual(result.content, [{ type: 'text', text: WORDS }]);
    assert.deepEqual(
      progress,
      [...new Set(progress)].sort((x, y) => x - y),
      'no progress twice, in order',
    );
    const resumed = lb.log.find((line) => line.includes('resume'));
    const call = lb.log.find((line) => line.includes('tools/call'));
    assert.ok(resumed && call, `a call and a resume: ${lb.log.join(', ')}`);
    assert.notEqual(resumed.split(' ').pop(), call.split(' ').pop(), 'the stream was resumed on the other process');
    assert.deepEqual(new Set(lb.log.map((line) => line.split(' ').pop())), new Set(['0', '1']));
    await client.close();
  });

  test('the process serving a call is SIGKILLed mid-run: the host resumes on the other and gets the whole answer', { timeout: 120_000 }, async () => {
    const [a, b] = await Promise.all([cluster.start('a', 'all'), cluster.start('b', 'all')]);
    const nodes = [a, b];
    const created = await api(baseOf(a), 'POST', '/v1/agents', { name: 'slowpoke', model: { provider: 'fake', script: [{ text: WORDS, delay_ms: 150 }] } });
    assert.equal(created.status, 201, JSON.stringify(created.body));

    const lb = balancer([baseOf(a), baseOf(b)]);
    const { client } = await connect(baseOf(a), API_KEY, { fetch: lb.fetch });
    await client.listTools();
    const progress: number[] = [];
    let killed: Promise<void> | null = null;
    const result = await client.callTool({ name: 'slowpoke', arguments: { input: 'go' } }, CallToolResultSchema, {
      onprogress: (p) => {
        progress.push(p.progress);
        if (progress.length === 3) {
          const served = Number(
            lb.log
              .find((line) => line.includes('tools/call'))!
              .split(' ')
              .pop(),
          );
          killed = kill9(nodes[served]);
        }
      },
    });
    assert.ok(killed, 'the process serving the call was killed');
    await killed;
    assert.deepEqual(result.content, [{ type: 'text', text: WORDS }]);
    assert.ok(
      lb.log.some((line) => line.includes('resume')),
      `the host resumed: ${lb.log.join(', ')}`,
    );
    assert.deepEqual(
      progress,
      [...new Set(progress)].sort((x, y) => x - y),
      'no progress twice, in order',
    );
    await client.close().catch(() => undefined);
  });
});

describe('MCP resource subscriptions across two palai serve processes [postgres]', { skip: postgresReason ?? false }, () => {
  const cluster = useCluster();

  test(
    'subscribed on one process, the session stream on the other announces the change; DELETE on the first ends that stream',
    { timeout: 120_000 },
    async () => {
      const [a, b] = await Promise.all([cluster.start('a', 'all'), cluster.start('b', 'all')]);
      const created = await api(baseOf(a), 'POST', '/v1/agents', {
        name: 'asker',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which city?' } }] }, { text: 'Oslo it is' }] },
        tools: [{ type: 'builtin', name: 'ask_user' }],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));

      // Every POST goes to a, the session's GET stream to b.
      const split: FetchLike = (url, init) => {
        const target = new URL(url);
        target.host = new URL(baseOf((init?.method ?? 'GET') === 'GET' ? b : a)).host;
        return fetch(target, init);
      };
      const watch = watchingStandaloneStream(split);
      const { client, transport } = await connect(baseOf(a), API_KEY, { fetch: watch.fetch });
      const updates: string[] = [];
      let updated: () => void = () => undefined;
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
        updates.push(notification.params.uri);
        updated();
      });
      await watch.opened;

      const task = await client.request(
        { method: 'tools/call', params: { name: 'asker', arguments: { input: 'weather?' }, task: {} } },
        CreateTaskResultSchema,
      );
      const uri = `palai://responses/${task.task.taskId}`;
      await client.subscribeResource({ uri });
      await waitUntil('the run waiting for input', 30_000, async () => (await getResponse(baseOf(a), task.task.taskId)).palai_status === 'waiting_for_input');
      const announced = new Promise<void>((resolve) => (updated = () => updates.includes(uri) && resolve()));
      const answered = await api(baseOf(a), 'POST', `/v1/responses/${task.task.taskId}/input`, { input: 'Oslo' });
      assert.equal(answered.status, 200, JSON.stringify(answered.body));
      await announced;
      await waitForTerminal(baseOf(a), task.task.taskId, 30_000);

      await transport.terminateSession();
      await watch.endedByServer;
      await client.close();
    },
  );
});
