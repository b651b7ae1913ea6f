// A kill -9 of the `palai serve` process whose run is in the middle of an MCP
// tools/call, and the run taken over by another process on the same PostgreSQL
// database: the call was committed as sent before it went out, so the new
// process never sends a call twice behind the model's back. A tool that is not
// annotated idempotent or read-only is answered "interrupted, not retried" (and
// the server saw it exactly once); a read-only one (server-everything's
// trigger-long-running-operation, the counting server's read-notes) is called
// again and its answer is the output. Either way the run ends cleanly.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { cleanUpProcesses } from '../support/cli.js';
import { freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';
import { ranCalls } from '../support/tool-results.js';
import { startEverything, type RunningEverything } from '../mcp/client-everything.js';
import { startFixtureHttpServer, type FixtureHttpServer } from '../mcp/client-fixture-server.js';
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
  type HubProcess,
} from './cluster.js';

const postgresReason = await postgresUnavailable();

after(cleanUpProcesses);

interface CallRow {
  name: string;
  attempts: number;
  checkpoint: { sent?: boolean } | null;
}

describe('MCP tool calls across a kill -9 and a takeover [postgres]', { skip: postgresReason ?? false }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | null = null;
  let db: pg.Client;
  let fixture: FixtureHttpServer;
  let everything: RunningEverything;
  const nodes: HubProcess[] = [];

  before(async () => {
    database = await freshPostgresDatabase();
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    [fixture, everything] = await Promise.all([startFixtureHttpServer(), startEverything()]);
  });
  after(async () => {
    cleanUpProcesses();
    everything.close();
    await fixture.close();
    await db.end();
    await database?.drop();
  });

  const start = async (name: string) => {
    const node = await startHub(name, 'all', clusterEnv(database!.url, { PALAI_BOOTSTRAP_API_KEY: API_KEY, PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1' }));
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
  const calls = async (responseId: string) =>
    (await db.query<CallRow>('SELECT name, attempts, checkpoint FROM tool_calls WHERE response_id = $1 ORDER BY position', [responseId])).rows;
  /** The output for each call, in the order the model made them. */
  const outputs = (response: { output: Array<{ type: string }> }) =>
    Object.fromEntries(ranCalls(response.output).map((call) => [call.name, typeof call.output === 'string' ? call.output : '']));

  /** Registers the servers (once) and an agent making `toolCalls` in one step, starts it on A and kills A once every call was sent. */
  async function killMidCall(
    agent: string,
    toolCalls: Array<{ name: string; arguments: Record<string, unknown> }>,
    reached: () => boolean,
  ): Promise<{ id: string }> {
    const a = await start('A');
    for (const [name, url] of [
      ['fixture', fixture.url],
      ['everything', everything.url],
    ]) {
      const registered = await api(baseOf(a), 'POST', '/v1/mcp_servers', { name, url });
      assert.ok(registered.status === 201 || registered.status === 409, JSON.stringify(registered.body));
    }
    await createAgent(baseOf(a), {
      name: agent,
      model: { provider: 'fake', script: [{ tool_calls: toolCalls }, { text: 'done' }] },
      tools: [
        { type: 'mcp', server_label: 'fixture', require_approval: 'never' },
        { type: 'mcp', server_label: 'everything', allowed_tools: ['trigger-long-running-operation'], require_approval: 'never' },
      ],
    });
    const created = await createBackground(baseOf(a), agent, 'go');
    await waitUntil('the server received the calls', 30_000, reached);
    await waitUntil('every call committed as sent', 10_000, async () => {
      const rows = await calls(created.id);
      return rows.length === toolCalls.length && rows.every((r) => r.checkpoint?.sent === true);
    });
    await kill9(a);
    return created;
  }

  test('a call that is not idempotent is not sent again: the model is told it was interrupted, the server saw it once', { timeout: 120_000 }, () =>
    withLogs(async () => {
      const writes = fixture.state.count('write-note');
      const created = await killMidCall(
        'writer',
        [{ name: 'mcp__fixture__write-note', arguments: { text: 'exactly once', ms: 4_000 } }],
        () => fixture.state.count('write-note') === writes + 1,
      );
      const b = await start('B');
      const final = await waitForTerminal(baseOf(b), created.id, 60_000);
      assert.equal(final.palai_status, 'completed', JSON.stringify(final));
      const error = JSON.parse(outputs(final)['mcp__fixture__write-note']).error;
      assert.match(error, /interrupted \(Palai stopped while the server ran it\) and was not retried/);
      // The server finished the first call on its own; nothing was sent again.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(fixture.state.count('write-note'), writes + 1, 'called exactly once');
      const [row] = await calls(created.id);
      assert.equal(row.attempts, 2, 'the call ran again after the takeover, and stopped at its checkpoint');
    }),
  );

  test("read-only tools are called again after the takeover: server-everything's long operation and the counting server's read", { timeout: 120_000 }, () =>
    withLogs(async () => {
      const reads = fixture.state.count('read-notes');
      const created = await killMidCall(
        'reader',
        [
          { name: 'mcp__everything__trigger-long-running-operation', arguments: { duration: 4, steps: 4 } },
          { name: 'mcp__fixture__read-notes', arguments: { ms: 4_000 } },
        ],
        () => fixture.state.count('read-notes') === reads + 1,
      );
      const b = await start('B');
      const final = await waitForTerminal(baseOf(b), created.id, 60_000);
      assert.equal(final.palai_status, 'completed', JSON.stringify(final));
      const got = outputs(final);
      assert.equal(got['mcp__everything__trigger-long-running-operation'], 'Long running operation completed. Duration: 4 seconds, Steps: 4.');
      assert.match(got['mcp__fixture__read-notes'], /^\d+ notes$/);
      assert.equal(fixture.state.count('read-notes'), reads + 2, 'called once before the kill and once after');
      assert.deepEqual(
        (await calls(created.id)).map((r) => r.attempts),
        [2, 2],
      );
    }),
  );
});
