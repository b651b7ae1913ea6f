// What /mcp serves besides tools, through the official SDK client: the
// project's responses and sessions as resources (listed newest first, read,
// watched for changes), its agents as prompts, completion of their ids, and a
// run's progress as log notifications at the level the host set.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  CreateTaskResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { createAgent, createSession } from '../support/api.js';
import { describeEachStore, withSlice } from '../support/hub.js';
import { connect, listen, watchingStandaloneStream, type Listening } from './mcp-client.js';

const fake = (script: object[]) => ({ provider: 'fake', script });
/** A hang fails the test alone, soon. */
const T = { timeout: 60_000 };
const NO_SUCH_RESPONSE = `palai://responses/resp_${'0'.repeat(26)}`;

/** Resolves with the value `check` first returns, checking again whenever `poke` is called. */
function eventually<T>(check: () => T | undefined): { value: Promise<T>; poke: () => void } {
  let resolve!: (value: T) => void;
  const value = new Promise<T>((r) => (resolve = r));
  const poke = () => {
    const found = check();
    if (found !== undefined) resolve(found);
  };
  return { value, poke };
}

async function mcpError(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof McpError, String(error));
    return error;
  }
  assert.fail('expected an MCP error');
}

await describeEachStore('MCP resources, prompts, completion and logging', (ctx) => {
  let server: Listening;
  before(async () => {
    server = await listen(ctx().hub.app);
    await createAgent(ctx, { name: 'greeter', description: 'Says hello.', model: fake([{ text: 'Hello there, friend' }]) });
    await createAgent(ctx, { name: 'plain', model: fake([{ text: 'plainly' }]) });
    await createAgent(ctx, { name: 'broken', model: fake([{ error: { message: 'the provider is down', status: 400 } }]) });
    await createAgent(ctx, {
      name: 'asker',
      model: fake([{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which city?' } }] }, { text: 'Oslo it is' }]),
      tools: [{ type: 'builtin', name: 'ask_user' }],
    });
  });
  after(() => server.close());

  /** A session of another project (its agent made for it). */
  async function foreignSession(): Promise<{ id: string }> {
    const auth = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
    await createAgent(ctx, { name: 'theirs', model: fake([{ text: 'x' }]) }, auth);
    const res = await ctx().http.post('/v1/sessions').set(auth).send({ agent: 'theirs' });
    assert.equal(res.status, 201, res.text);
    return res.body;
  }

  const responseIdOf = (result: { _meta?: Record<string, unknown> }): string => result._meta!['palai/response_id'] as string;

  test('each response and session is a resource: listed newest first, read as text and JSON; an unknown one is -32002', T, async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const { id: sessionId } = await createSession(ctx, { agent: 'greeter' });
    const first = responseIdOf(await client.callTool({ name: 'greeter', arguments: { input: 'hi', session_id: sessionId } }));
    const second = responseIdOf(await client.callTool({ name: 'greeter', arguments: { input: 'again', session_id: sessionId } }));
    const state = { session_id: sessionId };

    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    const [firstAt, secondAt, sessionAt] = [first, second, state.session_id].map((id) => uris.findIndex((uri) => uri.endsWith(`/${id}`)));
    assert.ok(secondAt >= 0 && firstAt > secondAt, `the newer response first: ${uris.join(', ')}`);
    assert.ok(sessionAt > secondAt, 'the session is older than the response that continued it');
    assert.equal(uris[secondAt], `palai://responses/${second}`);
    assert.equal(uris[sessionAt], `palai://sessions/${state.session_id}`);
    assert.equal(resources[secondAt].name, second);

    const read = await client.readResource({ uri: `palai://responses/${first}` });
    assert.deepEqual(read.contents[0], { uri: `palai://responses/${first}`, mimeType: 'text/plain', text: 'Hello there, friend' });
    const json = JSON.parse((read.contents[1] as { text: string }).text);
    assert.equal(read.contents[1].mimeType, 'application/json');
    assert.equal(json.id, first);
    assert.equal(json.status, 'completed');

    const session = await client.readResource({ uri: `palai://sessions/${state.session_id}` });
    const content = JSON.parse((session.contents[0] as { text: string }).text);
    assert.equal(content.session.id, state.session_id);
    const texts = content.items.flatMap((item: any) => item.content.map((part: any) => part.text));
    // The session's second response is past the greeter's one-step script, so it echoes.
    assert.deepEqual(texts, ['hi', 'Hello there, friend', 'again', 'again']);
    assert.equal(content.has_more, false);

    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(
      resourceTemplates.map((t) => t.uriTemplate),
      ['palai://responses/{response_id}', 'palai://sessions/{session_id}'],
    );

    for (const uri of [NO_SUCH_RESPONSE, 'palai://sessions/nope', 'file:///etc/passwd', `palai://responses/${state.session_id}`]) {
      const error = await mcpError(client.readResource({ uri }));
      assert.equal(error.code, -32002, uri);
      assert.equal(error.message, `MCP error -32002: Resource not found: ${uri}`, 'the code once');
      assert.deepEqual(error.data, { uri });
    }
    await client.close();
  });

  test("resources/list pages through every session and response once; another project's are not there", T, async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const foreign = await foreignSession();
    for (let i = 0; i < 55; i++) await createSession(ctx, { agent: 'plain' });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listResources(cursor ? { cursor } : {});
      seen.push(...page.resources.map((r) => r.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    assert.ok(pages >= 2, 'more than one page');
    assert.equal(new Set(seen).size, seen.length, 'no resource twice');
    const bodies = seen.map((id) => id.slice(id.indexOf('_') + 1));
    assert.deepEqual(bodies, [...bodies].sort().reverse(), 'newest first across pages');
    assert.ok(!seen.includes(foreign.id), "another project's session is not listed");
    const cross = await mcpError(client.readResource({ uri: `palai://sessions/${foreign.id}` }));
    assert.equal(cross.code, -32002, "another project's session is not found");
    const badCursor = await mcpError(client.listResources({ cursor: 'nope' }));
    assert.equal(badCursor.code, -32602);
    await client.close();
  });

  test('each agent is a prompt taking the tool’s arguments; prompts/get renders the call, with the session embedded', T, async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const { prompts } = await client.listPrompts();
    const greeter = prompts.find((p) => p.name === 'greeter')!;
    assert.equal(greeter.description, 'Says hello.');
    assert.deepEqual(
      greeter.arguments!.map((a) => [a.name, a.required]),
      [
        ['input', true],
        ['session_id', false],
      ],
    );
    assert.equal(prompts.find((p) => p.name === 'plain')!.description, 'The Palai agent plain.');

    const simple = await client.getPrompt({ name: 'greeter', arguments: { input: 'Say hi to Ada' } });
    assert.equal(simple.messages.length, 1);
    assert.equal(simple.messages[0].role, 'user');
    assert.match((simple.messages[0].content as { text: string }).text, /"greeter"[\s\S]*Say hi to Ada$/);

    const { id: sessionId } = await createSession(ctx, { agent: 'greeter' });
    await client.callTool({ name: 'greeter', arguments: { input: 'hi', session_id: sessionId } });
    const continued = await client.getPrompt({ name: 'greeter', arguments: { input: 'and again', session_id: sessionId } });
    assert.equal(continued.messages.length, 2);
    const embedded = continued.messages[0].content as { type: string; resource: { uri: string; text: string } };
    assert.equal(embedded.type, 'resource');
    assert.equal(embedded.resource.uri, `palai://sessions/${sessionId}`);
    assert.match(embedded.resource.text, /Hello there, friend/);
    assert.match((continued.messages[1].content as { text: string }).text, new RegExp(sessionId));

    const unknown = await mcpError(client.getPrompt({ name: 'nobody', arguments: { input: 'x' } }));
    assert.equal(unknown.code, -32602);
    assert.equal(unknown.message, "MCP error -32602: Unknown prompt: nobody. The prompts are this project's agents; prompts/list lists them.");
    assert.equal((await mcpError(client.getPrompt({ name: 'greeter' }))).code, -32602, 'input is required');
    assert.equal((await mcpError(client.getPrompt({ name: 'greeter', arguments: { input: 'x', session_id: 'ses_nope' } }))).code, -32602);
    await client.close();
  });

  test("completion offers the project's response and session ids for template and prompt arguments", T, async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const { id: sessionId } = await createSession(ctx, { agent: 'greeter' });
    const called = responseIdOf(await client.callTool({ name: 'greeter', arguments: { input: 'hi', session_id: sessionId } }));
    const foreign = await foreignSession();

    const responses = await client.complete({
      ref: { type: 'ref/resource', uri: 'palai://responses/{response_id}' },
      argument: { name: 'response_id', value: called.slice(0, 12) },
    });
    assert.ok(responses.completion.values.includes(called), JSON.stringify(responses));
    assert.ok(responses.completion.values.every((id) => id.startsWith(called.slice(0, 12))));

    const sessions = await client.complete({ ref: { type: 'ref/prompt', name: 'greeter' }, argument: { name: 'session_id', value: 'ses_' } });
    assert.ok(sessions.completion.values.includes(sessionId));
    assert.ok(!sessions.completion.values.includes(foreign.id), "another project's session is not offered");
    assert.ok(sessions.completion.values.length <= 100);

    const exact = await client.complete({
      ref: { type: 'ref/resource', uri: 'palai://sessions/{session_id}' },
      argument: { name: 'session_id', value: sessionId },
    });
    assert.deepEqual(exact.completion.values, [sessionId]);
    const wildcard = await client.complete({
      ref: { type: 'ref/resource', uri: 'palai://sessions/{session_id}' },
      argument: { name: 'session_id', value: '%' },
    });
    assert.deepEqual(wildcard.completion.values, [], 'a LIKE wildcard is matched as text');
    const freeText = await client.complete({ ref: { type: 'ref/prompt', name: 'greeter' }, argument: { name: 'input', value: 'he' } });
    assert.deepEqual(freeText.completion.values, []);
    await client.close();
  });

  test('with a level set, a call logs its run as notifications/message at that level and above; without one, nothing', T, async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const logs: LoggingMessageNotification['params'][] = [];
    const ended = eventually(() => logs.find((log) => /run (completed|failed)/.test((log.data as { message: string }).message)));
    let poke = ended.poke;
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logs.push(notification.params);
      poke();
    });
    await client.callTool({ name: 'greeter', arguments: { input: 'quietly' } });
    await client.setLoggingLevel('info');
    const logged = responseIdOf(await client.callTool({ name: 'greeter', arguments: { input: 'loudly' } }));
    await ended.value;
    assert.ok(
      logs.every((log) => (log.data as { response_id: string }).response_id === logged),
      'nothing from the call before the level was set',
    );
    const lines = logs.map((log) => `${log.level} ${(log.data as { message: string }).message}`);
    assert.ok(lines.includes('info run started (or resumed)'), lines.join('; '));
    assert.ok(lines.includes('info run completed'), lines.join('; '));
    assert.ok(!lines.some((line) => line.startsWith('debug')), 'nothing below info');
    assert.ok(logs.every((log) => log.logger === 'palai'));

    await client.setLoggingLevel('error');
    logs.length = 0;
    const failed = eventually(() => logs.find((log) => (log.data as { message: string }).message === 'run failed'));
    poke = failed.poke;
    const broken = responseIdOf(await client.callTool({ name: 'broken', arguments: { input: 'x' } }));
    const line = await failed.value;
    assert.equal(line.level, 'error');
    assert.equal((line.data as { response_id: string }).response_id, broken);
    assert.deepEqual(
      logs.map((log) => log.level),
      ['error'],
      'only what is at error or above',
    );
    await client.close();
  });

  test('a subscribed response and session send notifications/resources/updated as the run goes on; unsubscribed, nothing', T, async () => {
    const watch = watchingStandaloneStream();
    const { client } = await connect(server.url, ctx().apiKey, { fetch: watch.fetch });
    const updates: string[] = [];
    const checks: (() => void)[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updates.push(notification.params.uri);
      checks.forEach((check) => check());
    });
    await watch.opened;
    const waitForUpdate = (uri: string) => {
      const seen = eventually(() => (updates.includes(uri) ? true : undefined));
      checks.push(seen.poke);
      seen.poke();
      return seen.value;
    };

    // A run that waits for input: subscribed while it waits, it ends only when answered.
    const { id: sessionId } = await createSession(ctx, { agent: 'asker' });
    const task = await client.request(
      { method: 'tools/call', params: { name: 'asker', arguments: { input: 'weather?', session_id: sessionId }, task: {} } },
      CreateTaskResultSchema,
    );
    const responseId = task.task.taskId;
    const responseUri = `palai://responses/${responseId}`;
    const sessionUri = `palai://sessions/${sessionId}`;
    await client.subscribeResource({ uri: responseUri });
    await client.subscribeResource({ uri: sessionUri });
    await ctx().hub.api.responses.waitUntilSettled(ctx().projectId, responseId, 30_000);
    await ctx().hub.api.responses.submitInput(ctx().projectId, responseId, { input: 'Oslo' });
    await Promise.all([waitForUpdate(responseUri), waitForUpdate(sessionUri)]);
    const done = await ctx().hub.api.responses.waitUntilSettled(ctx().projectId, responseId, 30_000);
    assert.equal(done.status, 'completed');
    const read = await client.readResource({ uri: responseUri });
    assert.equal((read.contents[0] as { text: string }).text, 'Oslo it is');

    // Unsubscribed before its run is answered: that run's end says nothing; a watched one after it does.
    const quiet = await client.request({ method: 'tools/call', params: { name: 'asker', arguments: { input: 'weather?' }, task: {} } }, CreateTaskResultSchema);
    const quietUri = `palai://responses/${quiet.task.taskId}`;
    await client.subscribeResource({ uri: quietUri });
    await client.unsubscribeResource({ uri: quietUri });
    await ctx().hub.api.responses.waitUntilSettled(ctx().projectId, quiet.task.taskId, 30_000);
    const before = updates.length;
    await ctx().hub.api.responses.submitInput(ctx().projectId, quiet.task.taskId, { input: 'Bergen' });
    assert.equal((await ctx().hub.api.responses.waitUntilSettled(ctx().projectId, quiet.task.taskId, 30_000)).status, 'completed');
    const sentinel = await client.request(
      { method: 'tools/call', params: { name: 'asker', arguments: { input: 'weather?' }, task: {} } },
      CreateTaskResultSchema,
    );
    const sentinelUri = `palai://responses/${sentinel.task.taskId}`;
    await client.subscribeResource({ uri: sentinelUri });
    await ctx().hub.api.responses.waitUntilSettled(ctx().projectId, sentinel.task.taskId, 30_000);
    await ctx().hub.api.responses.submitInput(ctx().projectId, sentinel.task.taskId, { input: 'Paris' });
    await waitForUpdate(sentinelUri);
    assert.ok(!updates.slice(before).includes(quietUri), `no update of the unsubscribed response: ${updates.join(', ')}`);

    const unknown = await mcpError(client.subscribeResource({ uri: NO_SUCH_RESPONSE }));
    assert.equal(unknown.code, -32002);
    await client.close();
  });

  test('ending the session drops its subscriptions and ends its stream', T, async () => {
    const watch = watchingStandaloneStream();
    const { client, transport } = await connect(server.url, ctx().apiKey, { fetch: watch.fetch });
    await watch.opened;
    const called = responseIdOf(await client.callTool({ name: 'greeter', arguments: { input: 'hi' } }));
    await client.subscribeResource({ uri: `palai://responses/${called}` });
    const sessions = withSlice(ctx().hub, 'mcp').mcpSessions;
    const sessionId = transport.sessionId!;
    assert.deepEqual(await sessions.subscriptions(ctx().projectId, sessionId), [`palai://responses/${called}`]);
    await transport.terminateSession();
    await watch.endedByServer;
    assert.equal(await sessions.subscriptions(ctx().projectId, sessionId), null);
    const { rows } = await ctx().hub.kernel.db.query('SELECT uri FROM mcp_session_subscriptions WHERE session_id = $1', [sessionId]);
    assert.deepEqual(rows, [], 'nothing of it is kept');
    await client.close();
  });
});

await describeEachStore('MCP session stream at shutdown', (ctx) => {
  test('draining ends the session stream at once, and a draining process refuses a new one (503)', T, async () => {
    const server = await listen(ctx().hub.app);
    const watch = watchingStandaloneStream();
    const { client, transport } = await connect(server.url, ctx().apiKey, { fetch: watch.fetch });
    try {
      await watch.opened;
      ctx().hub.kernel.lifecycle.beginDrain();
      await watch.endedByServer;
      const again = await fetch(new URL('/mcp', server.url), {
        headers: { Authorization: `Bearer ${ctx().apiKey}`, Accept: 'text/event-stream', 'Mcp-Session-Id': transport.sessionId! },
      });
      assert.equal(again.status, 503);
      assert.equal(again.headers.get('retry-after'), '1');
    } finally {
      await client.close();
      await server.close();
    }
  });
});
