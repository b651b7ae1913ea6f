// Palai runs calling the tools of MCP servers (`{type: "mcp", server_label}`):
// the official @modelcontextprotocol/server-everything over Streamable HTTP and,
// declared by the operator, over stdio, driven by the fake model; and the tests'
// own counting server, to prove what reached the server and what did not.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ResponseState } from '../../core/api/index.js';
import { createAgent } from '../support/api.js';
import { ROOT } from '../support/cli.js';
import { describeEachStore, stdioServersFile } from '../support/hub.js';
import { EVERYTHING, startEverything, type RunningEverything } from './client-everything.js';
import { startFixtureHttpServer, type FixtureHttpServer } from './client-fixture-server.js';

type Call = { name: string; arguments: Record<string, unknown> };
const script = (...steps: Call[][]) => [...steps.map((tool_calls) => ({ tool_calls })), { text: 'done' }];

/** The tool calls of a response with their outputs, in the order the model made them (parallel calls finish in any order). */
function outputs(state: ResponseState): Array<{ name: string; output: string }> {
  const items = state.output as Array<{ type: string; call_id: string; name?: string; output?: string }>;
  return items
    .filter((item) => item.type === 'function_call')
    .map((call) => ({ name: call.name!, output: items.find((item) => item.type === 'function_call_output' && item.call_id === call.call_id)?.output ?? '' }));
}

await describeEachStore(
  'MCP server tools in runs',
  (ctx) => {
    let everything: RunningEverything;
    let fixture: FixtureHttpServer;
    before(async () => {
      [everything, fixture] = await Promise.all([startEverything(), startFixtureHttpServer()]);
      for (const [name, url] of [
        ['everything', everything.url],
        ['fixture', fixture.url],
      ]) {
        const res = await ctx().http.post('/v1/mcp_servers').set(ctx().auth).send({ name, url });
        assert.equal(res.status, 201, res.text);
      }
    });
    after(async () => {
      everything.close();
      await fixture.close();
    });

    const api = () => ctx().hub.api;
    const run = async (agent: string, input = 'go') => {
      const admitted = await api().responses.admit(ctx().projectId, { agent: agent, input: [{ role: 'user', content: input }] });
      return api().responses.waitUntilSettled(ctx().projectId, admitted.id, 40_000);
    };
    const checkpoints = async (responseId: string) =>
      (
        await ctx().hub.kernel.db.query<{ name: string; checkpoint: any }>('SELECT name, checkpoint FROM tool_calls WHERE response_id = $1 ORDER BY position', [
          responseId,
        ])
      ).rows;

    for (const server of ['everything', 'everything-stdio']) {
      test(`server-everything's echo, get-sum, get-structured-content and trigger-long-running-operation over ${server === 'everything' ? 'Streamable HTTP' : 'stdio'}`, async () => {
        const tool = (name: string) => `mcp__${server}__${name}`.replace(/[^A-Za-z0-9_-]/g, '_');
        await createAgent(ctx, {
          name: `uses-${server}`,
          model: {
            provider: 'fake',
            script: script([
              { name: tool('echo'), arguments: { message: 'hello MCP' } },
              { name: tool('get-sum'), arguments: { a: 2, b: 3 } },
              { name: tool('get-structured-content'), arguments: { location: 'Chicago' } },
              { name: tool('trigger-long-running-operation'), arguments: { duration: 1, steps: 4 } },
            ]),
          },
          tools: [{ type: 'mcp', server_label: server }],
        });
        const state = await run(`uses-${server}`);
        assert.equal(state.status, 'completed', JSON.stringify(state.error));
        const got = outputs(state).map((o) => o.output);
        assert.equal(got[0], 'Echo: hello MCP');
        assert.equal(got[1], 'The sum of 2 and 3 is 5.');
        assert.deepEqual(JSON.parse(got[2]), { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });
        assert.equal(got[3], 'Long running operation completed. Duration: 1 seconds, Steps: 4.');
        const long = (await checkpoints(state.id)).find((c) => c.name === tool('trigger-long-running-operation'))!;
        assert.equal(long.checkpoint.sent, true);
        // The last notification may race the result (the SDK drops progress that lands after it), so: some progress, of 4.
        assert.equal(long.checkpoint.progress?.total, 4, `the progress notifications were committed on the call: ${JSON.stringify(long.checkpoint)}`);
        assert.ok(long.checkpoint.progress.progress >= 1 && long.checkpoint.progress.progress <= 4);
      });
    }

    test('allowed_tools limits what the model may call', async () => {
      await createAgent(ctx, {
        name: 'only-echo',
        model: {
          provider: 'fake',
          script: script([{ name: 'mcp__everything__get-sum', arguments: { a: 1, b: 1 } }], [{ name: 'mcp__everything__echo', arguments: { message: 'ok' } }]),
        },
        tools: [{ type: 'mcp', server_label: 'everything', allowed_tools: ['echo', 'no-such-tool'] }],
      });
      const state = await run('only-echo');
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      const [sum, echo] = outputs(state);
      assert.match(JSON.parse(sum.output).error, /no tool named "mcp__everything__get-sum"/);
      assert.equal(echo.output, 'Echo: ok');
    });

    test("the call carries Palai's idempotency key in _meta; a result marked isError and an output that breaks its schema are tool errors", async () => {
      await createAgent(ctx, {
        name: 'writer',
        model: {
          provider: 'fake',
          script: script([
            { name: 'mcp__fixture__write-note', arguments: { text: 'first' } },
            { name: 'mcp__fixture__fail', arguments: {} },
            { name: 'mcp__fixture__bad-structured', arguments: {} },
          ]),
        },
        tools: [{ type: 'mcp', server_label: 'fixture', require_approval: 'never' }],
      });
      const before = fixture.state.calls.length;
      const state = await run('writer');
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      const [write, fail, bad] = outputs(state);
      assert.equal(write.output, 'noted: first');
      assert.deepEqual(JSON.parse(fail.output), { error: 'it broke' });
      assert.match(JSON.parse(bad.output).error, /does not satisfy its output schema: \/value must be number/);
      const call = (state.output as Array<{ type: string; name?: string; call_id: string }>).find(
        (i) => i.type === 'function_call' && i.name === 'mcp__fixture__write-note',
      )!;
      const received = fixture.state.calls.slice(before).find((c) => c.tool === 'write-note')!;
      assert.equal(received.meta?.['palai/idempotency_key'], `${state.id}:${call.call_id}`);
      assert.deepEqual(received.args, { text: 'first' });
    });

    test('arguments that break the input schema are a tool error and nothing reaches the server', async () => {
      await createAgent(ctx, {
        name: 'sloppy',
        model: {
          provider: 'fake',
          script: script([
            { name: 'mcp__fixture__write-note', arguments: {} },
            { name: 'mcp__fixture__write-note', arguments: { text: 'x', colour: 'red' } },
            { name: 'mcp__everything__get-sum', arguments: { a: 'two', b: 3 } },
          ]),
        },
        tools: [
          { type: 'mcp', server_label: 'fixture' },
          { type: 'mcp', server_label: 'everything', allowed_tools: ['get-sum'] },
        ],
      });
      const writes = fixture.state.count('write-note');
      const state = await run('sloppy');
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      for (const { output } of outputs(state)) assert.match(JSON.parse(output).error, /^Invalid arguments: /);
      assert.equal(fixture.state.count('write-note'), writes, 'the server saw no call');
    });

    test('require_approval "always" waits for a decision; approved, the call runs once', async () => {
      await createAgent(ctx, {
        name: 'careful',
        model: { provider: 'fake', script: script([{ name: 'mcp__fixture__read-notes', arguments: {} }]) },
        tools: [{ type: 'mcp', server_label: 'fixture', require_approval: 'always' }],
      });
      const reads = fixture.state.count('read-notes');
      let state = await run('careful');
      assert.equal(state.status, 'waiting_for_approval');
      assert.equal(state.pending_calls[0].name, 'mcp__fixture__read-notes');
      assert.equal(state.pending_calls[0].risk, 'read');
      assert.equal(fixture.state.count('read-notes'), reads, 'nothing was called before the decision');
      await api().responses.decideApproval(ctx().projectId, state.id, { call_id: state.pending_calls[0].call_id, decision: 'approve' });
      state = await api().responses.waitUntilSettled(ctx().projectId, state.id, 40_000);
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      assert.equal(fixture.state.count('read-notes'), reads + 1);
    });

    test("risks follow the annotations under the agent's policy; {tools} and never override it", async () => {
      await createAgent(ctx, {
        name: 'policed',
        model: {
          provider: 'fake',
          script: script([
            { name: 'mcp__fixture__read-notes', arguments: {} },
            { name: 'mcp__fixture__write-note', arguments: { text: 'w' } },
          ]),
        },
        tools: [{ type: 'mcp', server_label: 'fixture' }],
        approval: { risks: ['write'] },
      });
      const state = await run('policed');
      assert.equal(state.status, 'waiting_for_approval');
      assert.deepEqual(
        state.pending_calls.map((c) => [c.name, c.risk]),
        [['mcp__fixture__write-note', 'write']],
        'the read-only tool ran, the writing one waits',
      );
      await api().responses.cancel(ctx().projectId, state.id);

      await createAgent(ctx, {
        name: 'listed',
        model: { provider: 'fake', script: script([{ name: 'mcp__fixture__read-notes', arguments: {} }]) },
        tools: [{ type: 'mcp', server_label: 'fixture', require_approval: { tools: ['read-notes'] } }],
      });
      assert.equal((await run('listed')).status, 'waiting_for_approval');

      await createAgent(ctx, {
        name: 'trusting',
        model: { provider: 'fake', script: script([{ name: 'mcp__fixture__write-note', arguments: { text: 'trusted' } }]) },
        tools: [{ type: 'mcp', server_label: 'fixture', require_approval: 'never' }],
        approval: { risks: ['write'] },
      });
      assert.equal((await run('trusting')).status, 'completed');
    });

    test('two tools that would have one name for the model fail the run, saying so; allowed_tools picks one', async () => {
      const twin = await startFixtureHttpServer();
      try {
        twin.state.extraTools.push(
          { name: 'look.up', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
          { name: 'look_up', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
        );
        assert.equal((await ctx().http.post('/v1/mcp_servers').set(ctx().auth).send({ name: 'twin', url: twin.url })).status, 201);
        await createAgent(ctx, {
          name: 'confused',
          model: { provider: 'fake', script: script([{ name: 'mcp__twin__look_up', arguments: {} }]) },
          tools: [{ type: 'mcp', server_label: 'twin' }],
        });
        const failed = await run('confused');
        assert.equal(failed.status, 'failed');
        assert.match(failed.error!.message, /"look\.up" and "look_up", which are both mcp__twin__look_up to the model; list only one of them in allowed_tools/);

        await createAgent(ctx, {
          name: 'decided',
          model: { provider: 'fake', script: script([{ name: 'mcp__twin__look_up', arguments: {} }]) },
          tools: [{ type: 'mcp', server_label: 'twin', allowed_tools: ['look.up'] }],
        });
        const state = await run('decided');
        assert.equal(state.status, 'completed', JSON.stringify(state.error));
        assert.equal(outputs(state)[0].output, 'extra: look.up');
      } finally {
        await twin.close();
      }
    });

    test('a session the server forgot (404, or a 400 saying so) is opened again and the call goes through, once', async () => {
      await createAgent(ctx, {
        name: 'forgotten',
        model: { provider: 'fake', script: script([{ name: 'mcp__fixture__write-note', arguments: { text: 'before' } }]) },
        tools: [{ type: 'mcp', server_label: 'fixture', require_approval: 'never' }],
      });
      assert.equal((await run('forgotten')).status, 'completed');
      for (const status of [404, 400] as const) {
        const sessions = fixture.sessionsOpened();
        const writes = fixture.state.count('write-note');
        fixture.forgetSessions(status);
        const state = await run('forgotten');
        assert.equal(state.status, 'completed', JSON.stringify(state.error));
        assert.equal(outputs(state)[0].output, 'noted: before');
        assert.equal(fixture.sessionsOpened(), sessions + 1, `one new session after a ${status}`);
        assert.equal(fixture.state.count('write-note'), writes + 1, 'the call reached the server once');
      }
    });

    test('cancelling the run cancels the call on the server (notifications/cancelled)', async () => {
      await createAgent(ctx, {
        name: 'slow-writer',
        model: { provider: 'fake', script: script([{ name: 'mcp__fixture__write-note', arguments: { text: 'slow', ms: 30_000 } }]) },
        tools: [{ type: 'mcp', server_label: 'fixture', require_approval: 'never' }],
      });
      const cancelled = fixture.state.cancelled.length;
      const writes = fixture.state.count('write-note');
      const admitted = await api().responses.admit(ctx().projectId, { agent: 'slow-writer', input: [{ role: 'user', content: 'go' }] });
      for (let i = 0; i < 400 && fixture.state.count('write-note') === writes; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(fixture.state.count('write-note'), writes + 1, 'the call reached the server');
      await api().responses.cancel(ctx().projectId, admitted.id);
      const state = await api().responses.waitUntilSettled(ctx().projectId, admitted.id, 40_000);
      assert.equal(state.status, 'canceled');
      for (let i = 0; i < 200 && fixture.state.cancelled.length === cancelled; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(fixture.state.cancelled.length, cancelled + 1, 'the server was told');
    });

    test('a stdio server that dies is restarted: the call it died in is not retried, the next one reaches the new process', async () => {
      await createAgent(ctx, {
        name: 'breaker',
        model: {
          provider: 'fake',
          script: script(
            [{ name: 'mcp__fixture-stdio__pid', arguments: {} }],
            [{ name: 'mcp__fixture-stdio__exit', arguments: {} }],
            [{ name: 'mcp__fixture-stdio__pid', arguments: {} }],
          ),
        },
        tools: [{ type: 'mcp', server_label: 'fixture-stdio', require_approval: 'never' }],
      });
      const state = await run('breaker');
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      const [first, exit, second] = outputs(state).map((o) => o.output);
      assert.match(first, /^\d+$/);
      assert.match(JSON.parse(exit).error, /interrupted \(the connection to the server closed while it ran\) and was not retried/);
      assert.match(second, /^\d+$/);
      assert.notEqual(second, first, 'a new process answered');
    });
  },
  {
    mcpStdioServersFile: stdioServersFile([
      { name: 'everything-stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: {}, cwd: ROOT, projects: null },
      {
        name: 'fixture-stdio',
        command: process.execPath,
        args: ['--import', 'tsx', join(ROOT, 'tests', 'mcp', 'client-fixture-server.ts'), 'stdio'],
        env: {},
        cwd: ROOT,
        projects: null,
      },
    ]),
  },
);
