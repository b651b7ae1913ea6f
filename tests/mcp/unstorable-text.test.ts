// Text no store can hold (U+0000, a lone UTF-16 surrogate) reaching /mcp in
// any field the kernel would read — the host's clientInfo at initialize, a
// tasks/list cursor, a tools/call or prompts/get argument, a completion's
// value — is answered with MCP's invalid-params error (-32602), never an
// internal error, and nothing is made; a resource URI holding it names no
// resource (-32002).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { createAgent } from '../support/api.js';
import { describeEachStore, withSlice } from '../support/hub.js';
import { connect, listen, rawPost, type Listening } from './mcp-client.js';

const INVALID_PARAMS = -32602;
const BAD_TEXTS = ['nul \u0000 inside', 'lone \ud800 surrogate'];

await describeEachStore('MCP: text the store cannot hold', (ctx) => {
  let server: Listening;
  before(async () => {
    server = await listen(ctx().hub.app);
    await createAgent(ctx, { name: 'greeter', model: { provider: 'fake', script: [{ text: 'hi' }] } });
  });
  after(() => server.close());

  const auth = () => ({ Authorization: `Bearer ${ctx().apiKey}` });
  const rpc = (method: string, params: unknown, id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

  test('initialize with such text in clientInfo is invalid params (HTTP 400), and opens no session', async () => {
    for (const name of BAD_TEXTS) {
      const res = await rawPost(
        server.url,
        auth(),
        rpc('initialize', { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name, version: '1.0.0' } }),
      );
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('mcp-session-id'), null);
      const body = (await res.json()) as { error: { code: number; message: string } };
      assert.equal(body.error.code, INVALID_PARAMS);
      assert.match(body.error.message, /cannot be stored|not Unicode text/);
    }
  });

  test('a tasks/list cursor with such text is invalid params', async () => {
    const { client, transport } = await connect(server.url, ctx().apiKey);
    const session = { ...auth(), 'Mcp-Session-Id': transport.sessionId!, 'MCP-Protocol-Version': LATEST_PROTOCOL_VERSION };
    for (const cursor of BAD_TEXTS) {
      const res = await rawPost(server.url, session, rpc('tasks/list', { cursor }));
      const body = (await res.json()) as { error?: { code: number } };
      assert.equal(body.error?.code, INVALID_PARAMS, JSON.stringify(body));
    }
    await client.close();
  });

  test('a tools/call whose arguments hold such text is invalid params, and runs nothing', async () => {
    const { client } = await connect(server.url, ctx().apiKey);
    const before = await ctx().hub.api.responses.count(ctx().projectId, {});
    for (const text of BAD_TEXTS) {
      await assert.rejects(client.callTool({ name: 'greeter', arguments: { input: text } }), (error: { code?: number }) => error.code === INVALID_PARAMS);
      await assert.rejects(
        client.callTool({ name: 'greeter', arguments: { input: 'fine', session_id: text } }),
        (error: { code?: number }) => error.code === INVALID_PARAMS,
      );
    }
    assert.equal(await ctx().hub.api.responses.count(ctx().projectId, {}), before, 'no response was admitted');
    await client.close();
  });

  test('prompts/get, completion and resource URIs with such text are refused, and subscribe to nothing', async () => {
    const { client, transport } = await connect(server.url, ctx().apiKey);
    for (const text of BAD_TEXTS) {
      await assert.rejects(client.getPrompt({ name: 'greeter', arguments: { input: text } }), (error: { code?: number }) => error.code === INVALID_PARAMS);
      await assert.rejects(
        client.complete({ ref: { type: 'ref/resource', uri: 'palai://sessions/{session_id}' }, argument: { name: 'session_id', value: text } }),
        (error: { code?: number }) => error.code === INVALID_PARAMS,
      );
      for (const uri of [`palai://sessions/${text}`, text]) {
        await assert.rejects(client.readResource({ uri }), (error: { code?: number }) => error.code === -32002);
        await assert.rejects(client.subscribeResource({ uri }), (error: { code?: number }) => error.code === -32002);
      }
    }
    const sessions = withSlice(ctx().hub, 'mcp').mcpSessions;
    assert.deepEqual(await sessions.subscriptions(ctx().projectId, transport.sessionId!), []);
    await client.close();
  });
});
