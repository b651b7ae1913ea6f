// `palai mcp` over stdio, as a desktop host starts it: the SDK's stdio client
// spawns the command; with --url it bridges to a hub, without it runs on the
// local store. stdout carries only the protocol.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { createAgent } from '../support/api.js';
import { cleanUpProcesses, ROOT, runPalai, tempDir, userEnv } from '../support/cli.js';
import { describeEachStore } from '../support/hub.js';
import { listen, type Listening } from './mcp-client.js';

const PALAI = join(ROOT, 'bin', 'palai.mjs');

after(cleanUpProcesses);

/**
 * The stdio host config docs/mcp.md gives for a checkout, filled in for this
 * one: its placeholders (the checkout's path, the hub's URL, the key) replaced.
 */
function documentedCheckoutConfig(url: string, apiKey: string): { command: string; args: string[]; env: Record<string, string> } {
  const doc = readFileSync(join(ROOT, 'docs', 'mcp.md'), 'utf8');
  const stdio = doc.split(/^### /m).find((part) => part.startsWith('stdio\n'));
  assert.ok(stdio, 'docs/mcp.md has a "### stdio" section');
  const block = stdio.match(/^```json\n([\s\S]*?)^```$/m);
  assert.ok(block, 'the stdio section has a JSON host config');
  const filled = block[1].replaceAll('/path/to/palai', ROOT.replace(/\/$/, '')).replaceAll('https://palai.example.com', url).replaceAll('palai_sk_…', apiKey);
  return JSON.parse(filled).mcpServers.palai;
}

async function spawnBridge(args: string[], env: Record<string, string>, capabilities = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [PALAI, 'mcp', ...args],
    env: userEnv(env) as Record<string, string>,
    cwd: ROOT,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  const client = new Client({ name: 'palai-stdio-test', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

await describeEachStore('palai mcp --url: stdio bridged to a hub', (ctx) => {
  let server: Listening;
  before(async () => {
    server = await listen(ctx().hub.app);
    await createAgent(ctx, { name: 'greeter', description: 'Says hello.', model: { provider: 'fake', script: [{ text: 'Hello over stdio', delay_ms: 100 }] } });
    await createAgent(ctx, {
      name: 'asker',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which city?' } }] }, { text: 'Oslo it is' }] },
      tools: [{ type: 'builtin', name: 'ask_user' }],
    });
  });
  after(() => server.close());

  test('lists the agents, calls one with progress, runs a task, and relays elicitation to the host', { timeout: 60_000 }, async () => {
    const { client, stderr } = await spawnBridge(['--url', server.url], { PALAI_API_KEY: ctx().apiKey }, { elicitation: {} });
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['asker', 'greeter']);
      const progress: number[] = [];
      const result = await client.callTool({ name: 'greeter', arguments: { input: 'hi' } }, CallToolResultSchema, {
        onprogress: (p) => progress.push(p.progress),
      });
      assert.deepEqual(result.content, [{ type: 'text', text: 'Hello over stdio' }]);
      assert.match(String((result._meta as Record<string, unknown>)['palai/response_id']), /^resp_/);
      // The bridge relays notifications and the result on separate paths: a notification may land just after the result.
      for (const until = Date.now() + 5_000; progress.length === 0 && Date.now() < until;) await new Promise((resolve) => setTimeout(resolve, 25));
      assert.ok(progress.length > 0, 'progress reached the host');

      const created = await client.request({ method: 'tools/call', params: { name: 'greeter', arguments: { input: 'x' }, task: {} } }, CreateTaskResultSchema);
      const done = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      assert.deepEqual(done.content, [{ type: 'text', text: 'Hello over stdio' }]);

      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { answer: 'Oslo' } }));
      const answered = await client.callTool({ name: 'asker', arguments: { input: 'weather?' } });
      assert.deepEqual(answered.content, [{ type: 'text', text: 'Oslo it is' }]);
      assert.doesNotMatch(stderr(), new RegExp(ctx().apiKey), 'the key never reaches the logs');
    } finally {
      await client.close();
    }
  });

  test('relays resources, prompts, completion, log lines and resource updates both ways', { timeout: 60_000 }, async () => {
    const { client } = await spawnBridge(['--url', server.url], { PALAI_API_KEY: ctx().apiKey });
    try {
      const logs: string[] = [];
      const updates: string[] = [];
      let heard: () => void = () => undefined;
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push((n.params.data as { message: string }).message));
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updates.push(n.params.uri);
        heard();
      });
      assert.deepEqual((await client.listPrompts()).prompts.map((p) => p.name).sort(), ['asker', 'greeter']);
      const prompt = await client.getPrompt({ name: 'greeter', arguments: { input: 'hi' } });
      assert.match((prompt.messages[0].content as { text: string }).text, /hi$/);
      await client.setLoggingLevel('info');

      const created = await client.request({ method: 'tools/call', params: { name: 'asker', arguments: { input: 'x' }, task: {} } }, CreateTaskResultSchema);
      const uri = `palai://responses/${created.task.taskId}`;
      await client.subscribeResource({ uri });
      await ctx().hub.api.responses.waitUntilSettled(ctx().projectId, created.task.taskId, 30_000);
      const announced = new Promise<void>((resolve) => (heard = () => updates.includes(uri) && resolve()));
      await ctx().hub.api.responses.submitInput(ctx().projectId, created.task.taskId, { input: 'Oslo' });
      await announced;

      const called = await client.callTool({ name: 'greeter', arguments: { input: 'hi' } });
      const id = String((called._meta as Record<string, unknown>)['palai/response_id']);
      for (const until = Date.now() + 5_000; !logs.includes('run completed') && Date.now() < until;) await new Promise((resolve) => setTimeout(resolve, 25));
      assert.ok(logs.includes('run completed'), `the run's log lines reached the host: ${logs.join('; ')}`);
      const read = await client.readResource({ uri: `palai://responses/${id}` });
      assert.equal((read.contents[0] as { text: string }).text, 'Hello over stdio');
      assert.ok((await client.listResources()).resources.some((r) => r.uri === `palai://responses/${id}`));
      assert.equal((await client.listResourceTemplates()).resourceTemplates.length, 2);
      const completed = await client.complete({
        ref: { type: 'ref/resource', uri: 'palai://responses/{response_id}' },
        argument: { name: 'response_id', value: id },
      });
      assert.deepEqual(completed.completion.values, [id]);
      await assert.rejects(
        client.readResource({ uri: 'palai://responses/nope' }),
        (error: McpError) => error.code === -32002 && !/MCP error.*MCP error/.test(error.message),
      );
    } finally {
      await client.close();
    }
  });

  test('the host config of docs/mcp.md starts the bridge from any directory, and an unknown tool keeps its message', { timeout: 60_000 }, async () => {
    const config = documentedCheckoutConfig(server.url, ctx().apiKey);
    assert.equal(config.command, 'node', 'a checkout is run by node');
    assert.equal(config.args[0], join(ROOT, 'bin', 'palai.mjs'), 'by the absolute path of bin/palai.mjs');
    // As a host spawns it: the command through PATH, the SDK's inherited environment plus the config's, a directory of its own.
    const transport = new StdioClientTransport({ ...config, cwd: tempDir('palai-mcp-host-'), stderr: 'pipe' });
    const client = new Client({ name: 'palai-stdio-host', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['asker', 'greeter']);
      const unknown = "Unknown tool: nobody. The tools are this project's agents; tools/list lists them.";
      await assert.rejects(client.callTool({ name: 'nobody', arguments: { input: 'x' } }), (error: Error & { code?: number }) => {
        assert.equal(error.code, -32602);
        assert.equal(error.message, `MCP error -32602: ${unknown}`);
        return true;
      });
    } finally {
      await client.close();
    }
  });

  test('a wrong key is one line on stderr and a non-zero exit', async () => {
    const result = await runPalai(['mcp', '--url', server.url], userEnv({ PALAI_API_KEY: 'palai_sk_wrong' }), 60_000);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /refused the API key/);
    assert.equal(result.stdout, '');
  });
});

describe('palai mcp without --url: the local store', () => {
  test('serves the local agents over stdio, bootstrapping an empty store', { timeout: 90_000 }, async () => {
    const home = join(tempDir('palai-mcp-'), 'home');
    const key = 'palai_sk_mcp_local_bootstrap_0123456789';
    const { client, stderr } = await spawnBridge([], { PALAI_HOME: home, PALAI_BOOTSTRAP_API_KEY: key });
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools, [], 'a new store has no agents yet');
      assert.match(stderr(), /created project proj_/);
    } finally {
      await client.close();
    }
  });
});
