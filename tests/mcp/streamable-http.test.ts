// MCP over Streamable HTTP: the official SDK client against /mcp — the agents
// of the key's project as tools, calls as Palai responses, progress from the
// journal, cancellation, tasks, and the transport's refusals.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CallToolResultSchema, ElicitRequestSchema, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { connect, listen, rawPost, type Listening } from './mcp-client.js';

const fake = (script: object[]) => ({ provider: 'fake', script });

await describeEachStore('MCP over Streamable HTTP', (ctx) => {
  let server: Listening;
  before(async () => {
    server = await listen(ctx().hub.app);
    await createAgent(ctx, { name: 'greeter', description: 'Says hello.', model: fake([{ text: 'Hello there, friend' }]) });
    await createAgent(ctx, {
      name: 'classifier',
      model: fake([{ json: { label: 'spam', score: 0.9 } }]),
      output_schema: {
        type: 'object',
        properties: { label: { type: 'string' }, score: { type: 'number' } },
        required: ['label', 'score'],
        additionalProperties: false,
      },
    });
    await createAgent(ctx, { name: 'slow', model: fake([{ text: 'one two three four five six seven eight nine ten', delay_ms: 150 }]) });
    await createAgent(ctx, { name: 'broken', model: fake([{ error: { message: 'the provider is down', status: 400 } }]) });
    await createAgent(ctx, {
      name: 'asker',
      model: fake([{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which city?' } }] }, { text: 'Oslo it is' }]),
      tools: [{ type: 'builtin', name: 'ask_user' }],
    });
    await createAgent(ctx, {
      name: 'careful',
      model: fake([{ tool_calls: [{ name: 'echo', arguments: { text: 'rm -rf' } }] }, { text: 'Done carefully' }]),
      tools: [{ type: 'builtin', name: 'echo' }],
      approval: { tools: ['echo'] },
    });
  });
  after(() => server.close());

  test('tools/list names every agent of the project, with its description, input and output schema', async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.equal(byName.greeter.description, 'Says hello.');
    assert.deepEqual(byName.greeter.inputSchema.required, ['input']);
    assert.equal(byName.greeter.outputSchema, undefined);
    assert.equal(byName.classifier.outputSchema?.type, 'object');
    assert.equal(byName.greeter.execution?.taskSupport, 'optional');
    assert.equal(byName.greeter.annotations?.readOnlyHint, true);
    await client.close();
  });

  test('a call runs the agent as a Palai response and answers with its text and the response id', async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const result = await client.callTool({ name: 'greeter', arguments: { input: 'hi' } });
    assert.equal(result.isError, undefined);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello there, friend' }]);
    const responseId = (result._meta as Record<string, string>)['palai/response_id'];
    const rest = await ctx().http.get(`/v1/responses/${responseId}`).set(ctx().auth);
    assert.equal(rest.body.status, 'completed');
    await client.close();
  });

  test('an agent with an output schema answers with structuredContent and the same JSON as text', async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    await client.listTools();
    const result = await client.callTool({ name: 'classifier', arguments: { input: 'buy now' } });
    assert.deepEqual(result.structuredContent, { label: 'spam', score: 0.9 });
    assert.deepEqual(JSON.parse((result.content as Array<{ text: string }>)[0].text), { label: 'spam', score: 0.9 });
    await client.close();
  });

  test('progress notifications follow the journal when the caller sent a progress token', async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const seen: number[] = [];
    const result = await client.callTool({ name: 'greeter', arguments: { input: 'hi' } }, CallToolResultSchema, {
      onprogress: (p) => seen.push(p.progress),
    });
    assert.equal(result.isError, undefined);
    assert.ok(seen.length >= 4, `progress: ${seen.join(',')}`);
    assert.deepEqual(
      seen,
      [...seen].sort((a, b) => a - b),
      'progress only grows',
    );
    await client.close();
  });

  test('a failed run is an isError result with a readable message; bad arguments are an isError result naming them', async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const failed = await client.callTool({ name: 'broken', arguments: { input: 'x' } });
    assert.equal(failed.isError, true);
    assert.match((failed.content as Array<{ text: string }>)[0].text, /the provider is down/);
    const bad = await client.callTool({ name: 'greeter', arguments: { input: 42 } });
    assert.equal(bad.isError, true);
    assert.match((bad.content as Array<{ text: string }>)[0].text, /"input"/);
    const extra = await client.callTool({ name: 'greeter', arguments: { input: 'x', colour: 'red' } });
    assert.equal(extra.isError, true);
    assert.match((extra.content as Array<{ text: string }>)[0].text, /colour/);
    await client.close();
  });

  test("an unknown tool is -32602 saying how to list the tools, with the SDK client's prefix once", async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const unknown = "Unknown tool: nobody. The tools are this project's agents; tools/list lists them.";
    const once = (error: Error & { code?: number }) => {
      assert.equal(error.code, -32602);
      assert.equal(error.message, `MCP error -32602: ${unknown}`);
      return true;
    };
    await assert.rejects(client.callTool({ name: 'nobody', arguments: { input: 'x' } }), once);
    const { CreateTaskResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
    await assert.rejects(
      client.request({ method: 'tools/call', params: { name: 'nobody', arguments: { input: 'x' }, task: {} } }, CreateTaskResultSchema),
      once,
    );
    await client.close();
  });

  test('notifications/cancelled cancels the response', async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const controller = new AbortController();
    let responseId = '';
    const call = client.callTool({ name: 'slow', arguments: { input: 'x' } }, CallToolResultSchema, {
      signal: controller.signal,
      onprogress: () => undefined,
    });
    // Wait until the run is under way, then hang up on it.
    for (let i = 0; i < 100 && !responseId; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const { rows } = await ctx().hub.kernel.db.query<{ response_id: string }>('SELECT response_id FROM mcp_session_calls ORDER BY created_at DESC LIMIT 1');
      const id = rows[0]?.response_id;
      if (id) {
        const state = await ctx().hub.api.responses.get(ctx().projectId, id);
        if (state.status === 'in_progress') responseId = id;
      }
    }
    assert.ok(responseId, 'the call started a run');
    controller.abort();
    await assert.rejects(call);
    const settled = await ctx().hub.api.responses.waitUntilSettled(ctx().projectId, responseId, 10_000);
    assert.equal(settled.status, 'canceled');
    await client.close();
  });

  test('a task-augmented call answers with a task at once; polling tasks/get then tasks/result gives the answer', async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const created = await client.request(
      { method: 'tools/call', params: { name: 'slow', arguments: { input: 'x' }, task: { ttl: 60_000 } } },
      (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    assert.match(taskId, /^resp_/);
    assert.equal(created.task.status, 'working');
    let status: string = created.task.status;
    for (let i = 0; i < 200 && status === 'working'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await client.experimental.tasks.getTask(taskId)).status;
    }
    assert.equal(status, 'completed');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    assert.deepEqual(result.content, [{ type: 'text', text: 'one two three four five six seven eight nine ten' }]);
    const listed = await client.experimental.tasks.listTasks();
    assert.ok(listed.tasks.some((t) => t.taskId === taskId));
    await assert.rejects(client.experimental.tasks.cancelTask(taskId), /terminal/);
    await client.close();
  });

  test('tasks/cancel cancels a running task', async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const { CreateTaskResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const created = await client.request({ method: 'tools/call', params: { name: 'slow', arguments: { input: 'x' }, task: {} } }, CreateTaskResultSchema);
    const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
    assert.equal(cancelled.status, 'cancelled');
    await client.close();
  });

  test('a run waiting for input asks the host through elicitation, and the answer goes on with the run', async () => {
    const { client } = await connect(server.url, ctx().apiKey, { capabilities: { elicitation: {} } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { answer: 'Oslo' } };
    });
    const result = await client.callTool({ name: 'asker', arguments: { input: 'weather?' } });
    assert.deepEqual(asked, ['Which city?']);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Oslo it is' }]);
    await client.close();
  });

  test('a run waiting for approval asks the host; approved, the tool runs and the call completes', async () => {
    const { client } = await connect(server.url, ctx().apiKey, { capabilities: { elicitation: {} } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { approve: true } };
    });
    const result = await client.callTool({ name: 'careful', arguments: { input: 'clean up' } });
    assert.equal(asked.length, 1);
    assert.match(asked[0], /echo/);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Done carefully' }]);
    await client.close();
  });

  test('a host that cannot elicit gets what the run waits for as an isError result, with the response id', async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const result = await client.callTool({ name: 'asker', arguments: { input: 'weather?' } });
    assert.equal(result.isError, true);
    assert.match((result.content as Array<{ text: string }>)[0].text, /Which city\?/);
    const meta = result._meta as Record<string, string>;
    assert.equal(meta['palai/status'], 'waiting_for_input');
    const state = await ctx().hub.api.responses.get(ctx().projectId, meta['palai/response_id']);
    assert.equal(state.status, 'waiting_for_input', 'the run still waits: someone may answer it through the REST API');
    await client.close();
  });

  test('a waiting task is input_required; tasks/result asks through elicitation and ends with the answer', async () => {
    const { client } = await connect(server.url, ctx().apiKey, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { answer: 'Bergen' } }));
    const { CreateTaskResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const created = await client.request(
      { method: 'tools/call', params: { name: 'asker', arguments: { input: 'weather?' }, task: {} } },
      CreateTaskResultSchema,
    );
    let status: string = created.task.status;
    for (let i = 0; i < 200 && status === 'working'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await client.experimental.tasks.getTask(created.task.taskId)).status;
    }
    assert.equal(status, 'input_required');
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Oslo it is' }]);
    await client.close();
  });

  test('without a key the answer is 401 with a WWW-Authenticate challenge naming the resource metadata', async () => {
    const res = await rawPost(server.url, {}, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    assert.equal(res.status, 401);
    assert.match(
      res.headers.get('www-authenticate') ?? '',
      /^Bearer .*resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    const metadata: any = await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', server.url))).json();
    assert.equal(metadata.resource, `${server.url}/mcp`);
    assert.deepEqual(metadata.bearer_methods_supported, ['header']);
  });

  test('the transport refuses a bad session, a wrong protocol version, a foreign Origin and malformed JSON-RPC', async () => {
    const auth = { Authorization: `Bearer ${ctx().apiKey}` };
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const noSession = await rawPost(server.url, auth, ping);
    assert.equal(noSession.status, 400);
    const unknown = await rawPost(server.url, { ...auth, 'Mcp-Session-Id': 'mcps_nope' }, ping);
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as any).error.code, -32001);

    const { client, transport } = await connect(server.url, ctx().apiKey);
    const session = { ...auth, 'Mcp-Session-Id': transport.sessionId! };
    const wrongVersion = await rawPost(server.url, { ...session, 'MCP-Protocol-Version': '1999-01-01' }, ping);
    assert.equal(wrongVersion.status, 400);
    const okVersion = await rawPost(server.url, { ...session, 'MCP-Protocol-Version': LATEST_PROTOCOL_VERSION }, ping);
    assert.equal(okVersion.status, 200);
    assert.deepEqual(((await okVersion.json()) as any).result, {});

    const badOrigin = await rawPost(server.url, { ...session, Origin: 'http://evil.example' }, ping);
    assert.equal(badOrigin.status, 403);
    const notJson = await rawPost(server.url, session, '{"jsonrpc": "2.0", "id": 1, "method": ');
    assert.equal(notJson.status, 400);
    assert.equal(((await notJson.json()) as any).error.code, -32700);
    const notJsonRpc = await rawPost(server.url, session, JSON.stringify({ hello: 'world' }));
    assert.equal(notJsonRpc.status, 400);
    assert.equal(((await notJsonRpc.json()) as any).error.code, -32600);
    const unknownMethod = await rawPost(server.url, session, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'nope/nothing' }));
    assert.equal(((await unknownMethod.json()) as any).error.code, -32601);

    const otherKey = await ctx().newProjectKey();
    const foreign = await rawPost(server.url, { Authorization: `Bearer ${otherKey}`, 'Mcp-Session-Id': transport.sessionId! }, ping);
    assert.equal(foreign.status, 404, "another project's key cannot use the session");

    await transport.terminateSession();
    const ended = await rawPost(server.url, session, ping);
    assert.equal(ended.status, 404);
    await client.close();
  });
});
