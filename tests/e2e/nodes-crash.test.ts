// Companion nodes under crashes, with real processes only: `palai serve` hubs on
// one PostgreSQL, `palai node run` connected through a TCP balancer (as a
// deployment's load balancer), and a fake model calling the node's shell.
// Each command writes a line to ran.log in its working scope, so "ran once" is
// a line count on the node's own disk.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cleanUpProcesses, type Running } from '../support/cli.js';
import { companionFiles, killCompanion, pairCompanion, startCompanion, type CompanionFiles } from '../support/companion.js';
import { postgresUnavailable } from '../support/stores.js';
import { TcpBalancer } from '../support/tcp-balancer.js';
import { until } from '../support/until.js';
import {
  api,
  assertJournal,
  baseOf,
  createAgent,
  createBackground,
  kill9,
  logsOf,
  readJournal,
  useCluster,
  waitForTerminal,
  type HubProcess,
} from './cluster.js';

const postgresReason = await postgresUnavailable();

const portOf = (hub: HubProcess): number => Number(new URL(baseOf(hub)).port);
const caller = (hub: HubProcess) => (method: 'GET' | 'POST', path: string, body?: unknown) => api(baseOf(hub), method, path, body);

/** The lines of ran.log in the node's working scope. */
const ranLines = (files: CompanionFiles): string[] => {
  const path = join(files.workDir, 'ran.log');
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
};

/** An agent whose first step runs `script` on the node `alias`, then says "finished". */
const runner = (name: string, alias: string, script: string) => ({
  name,
  tools: [{ type: 'node', node: alias }],
  model: {
    provider: 'fake',
    script: [{ tool_calls: [{ name: `node__${alias}__shell_exec`, arguments: { script, working_scope: 'work' } }] }, { text: 'finished' }],
  },
});

/** The outputs the journal holds for the response's node call (a call Palai ran shows as an mcp_call, done a second time with its output). */
const callOutputs = (journal: Awaited<ReturnType<typeof readJournal>>) =>
  journal
    .filter((e) => e.event === 'response.output_item.done' && e.data.item.type === 'mcp_call' && e.data.item.output !== null)
    .map((e) => e.data.item.output as string);

describe('companion nodes under crashes [postgres]', { skip: postgresReason ?? false }, () => {
  const cluster = useCluster();
  const balancers: TcpBalancer[] = [];
  const companions: Running[] = [];
  after(async () => {
    for (const b of balancers) await b.close();
    cleanUpProcesses();
  });

  async function paired(
    hub: HubProcess,
    alias: string,
  ): Promise<{ files: CompanionFiles; balancer: TcpBalancer; companion: Running; nodeId: string; hubUrl: string }> {
    const balancer = await TcpBalancer.start([portOf(hub)]);
    balancers.push(balancer);
    const files = companionFiles();
    const hubUrl = `ws://127.0.0.1:${balancer.port}/v1/nodes/connect`;
    const { companion, nodeId } = await pairCompanion(caller(hub), (token) => startCompanion(hubUrl, files, cluster.env(), token), alias, ['shell.exec.v1']);
    companions.push(companion);
    return { files, balancer, companion, nodeId, hubUrl };
  }

  test(
    'the hub holding the connection and running the response SIGKILLed mid-command: the run completes on the survivor, the command ran once',
    { timeout: 180_000 },
    async (t) => {
      const a = await cluster.start('A', 'all');
      const hubs = [a];
      try {
        const { files, balancer } = await paired(a, 'crash');
        await createAgent(baseOf(a), runner('crash-runner', 'crash', 'echo run >> ran.log; sleep 8; echo end >> ended.log; echo done'));
        // Only A runs at first: A claims the response, and A holds the connection.
        const created = await createBackground(baseOf(a), 'crash-runner', 'go');
        await until('the command running on the node', () => ranLines(files).length === 1, 50);
        const b = await cluster.start('B', 'all');
        hubs.push(b);
        balancer.route([portOf(b)]);
        await kill9(a);
        const final = await waitForTerminal(baseOf(b), created.id, 90_000);
        assert.equal(final.status, 'completed', JSON.stringify(final));
        assert.deepEqual(ranLines(files), ['run'], 'the command ran once');
        const journal = await readJournal(baseOf(b), created.id);
        assertJournal(journal, 'response.completed');
        const outputs = callOutputs(journal);
        assert.equal(outputs.length, 1, `one output for the call: ${JSON.stringify(outputs)}`);
        const result = JSON.parse(outputs[0]);
        assert.equal(result.exit_code, 0, outputs[0]);
        assert.equal(result.stdout, 'done\n');
        t.diagnostic(`the call's output after the takeover: ${outputs[0]}`);
      } catch (error) {
        t.diagnostic(logsOf(...hubs));
        throw error;
      }
    },
  );

  test('the companion SIGKILLed mid-command and restarted: the call ends INVOCATION_UNKNOWN, the command is not run again', { timeout: 120_000 }, async (t) => {
    const a = await cluster.start('A', 'all');
    try {
      const { files, companion, hubUrl, nodeId } = await paired(a, 'unknown');
      await createAgent(baseOf(a), runner('unknown-runner', 'unknown', 'echo run >> ran.log; sleep 5; echo done'));
      const created = await createBackground(baseOf(a), 'unknown-runner', 'go');
      await until('the command running on the node', () => ranLines(files).length === 1, 50);
      await killCompanion(companion);
      const restarted = startCompanion(hubUrl, files, cluster.env());
      companions.push(restarted);
      const final = await waitForTerminal(baseOf(a), created.id, 60_000);
      assert.equal(final.status, 'completed', JSON.stringify(final));
      const outputs = callOutputs(await readJournal(baseOf(a), created.id));
      assert.equal(outputs.length, 1, JSON.stringify(outputs));
      assert.equal(JSON.parse(outputs[0]).error?.code, 'INVOCATION_UNKNOWN', outputs[0]);
      // Past the command's own sleep: had it been run again, a second line would be there by now.
      const invocations = await caller(a)('GET', `/v1/nodes/${nodeId}/invocations`);
      assert.equal(invocations.body.data[0].state, 'unknown', JSON.stringify(invocations.body));
      assert.deepEqual(ranLines(files), ['run'], 'the command ran once');
      restarted.child.kill('SIGTERM');
    } catch (error) {
      t.diagnostic(logsOf(a));
      throw error;
    }
  });

  test('cancelling the response during `sleep 30`: the command’s process is gone within the grace period', { timeout: 120_000 }, async (t) => {
    const a = await cluster.start('A', 'all');
    try {
      const { files, nodeId } = await paired(a, 'cancel');
      await createAgent(baseOf(a), runner('cancel-runner', 'cancel', 'echo run >> ran.log; sleep 30 & echo $! > sleep.pid; wait'));
      const created = await createBackground(baseOf(a), 'cancel-runner', 'go');
      const pidFile = join(files.workDir, 'sleep.pid');
      const pid = await until('the sleep started', () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) || null : null), 50);
      const cancelled = await caller(a)('POST', `/v1/responses/${created.id}/cancel`);
      assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
      const askedAt = Date.now();
      await until('the sleep process gone', () => !alive(pid), 50);
      const goneAfter = Date.now() - askedAt;
      // TERM, then KILL after the companion's 5 s grace: gone well within the grace and the round trip.
      assert.ok(goneAfter < 15_000, `the process lived ${goneAfter} ms after the cancel`);
      const invocation = await until(
        'the invocation recorded canceled',
        async () => {
          const listed = await caller(a)('GET', `/v1/nodes/${nodeId}/invocations`);
          const first = listed.body.data[0];
          return first?.state === 'canceled' ? first : null;
        },
        100,
      );
      assert.equal(invocation.response_id, created.id);
      t.diagnostic(`the sleep was gone ${goneAfter} ms after the cancel`);
    } catch (error) {
      t.diagnostic(logsOf(a));
      throw error;
    }
  });
});

/** Whether `pid` runs (a zombie waiting for its reaper counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/\) Z /u.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
