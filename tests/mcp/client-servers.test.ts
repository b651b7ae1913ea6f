// /v1/mcp_servers: a project's MCP servers (Streamable HTTP, headers write-only)
// beside the operator's stdio servers (read-only), and their tools as listed —
// every answer checked against the OpenAPI document, every refusal a problem.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort, ROOT } from '../support/cli.js';
import { describeEachStore, stdioServersFile } from '../support/hub.js';
import { assertMatchesSpec } from '../support/spec.js';
import { startFixtureHttpServer, type FixtureHttpServer } from './client-fixture-server.js';

const SECRET_KEY = 'mcp-servers-test-secret';
const TOKEN = 'Bearer fixture-token-0123456789abcdef';
const FIXTURE = join(ROOT, 'tests', 'mcp', 'client-fixture-server.ts');

await describeEachStore(
  'MCP servers of a project',
  (ctx) => {
    let fixture: FixtureHttpServer;
    before(async () => {
      fixture = await startFixtureHttpServer();
    });
    after(() => fixture.close());

    const post = (path: string, body: object) => ctx().http.post(path).set(ctx().auth).send(body);
    const get = (path: string) => ctx().http.get(path).set(ctx().auth);

    test("registering keeps the header values write-only; it lists, reads and deletes; the operator's stdio server is listed read-only", async () => {
      const res = await post('/v1/mcp_servers', { name: 'fixture', url: fixture.url, headers: { Authorization: TOKEN } });
      assertMatchesSpec(res, 'createMcpServer');
      assert.equal(res.status, 201, res.text);
      assert.match(res.body.id, /^mcps_[0-9a-z]{26}$/);
      assert.deepEqual(
        { ...res.body, id: undefined, created_at: undefined },
        {
          id: undefined,
          object: 'mcp_server',
          name: 'fixture',
          transport: 'streamable_http',
          url: fixture.url,
          headers: { Authorization: { set: true, last4: 'cdef' } },
          tools_listed_at: null,
          created_at: undefined,
        },
      );
      assert.ok(!res.text.includes('fixture-token'), 'the value is never shown');
      assert.equal(fixture.sessionsOpened(), 0, 'nothing is called on registration');

      const one = await get('/v1/mcp_servers/fixture');
      assertMatchesSpec(one, 'getMcpServer');
      assert.equal(one.body.id, res.body.id);
      assert.equal((await get(`/v1/mcp_servers/${res.body.id}`)).body.name, 'fixture');

      const list = await get('/v1/mcp_servers');
      assertMatchesSpec(list, 'listMcpServers');
      assert.deepEqual(
        list.body.data.map((s: { name: string; transport: string }) => `${s.transport}:${s.name}`),
        ['stdio:local', 'streamable_http:fixture'],
      );
      const operator = list.body.data[0];
      assert.equal(operator.id, 'mcps_operator_local');
      assert.equal(operator.url, null);
      assert.ok(!list.text.includes('fixture-server.ts') && !list.text.includes('FIXTURE_SECRET'), "the operator's command and environment are not shown");

      const page1 = await get('/v1/mcp_servers?limit=1');
      assert.deepEqual([page1.body.data.length, page1.body.has_more, page1.body.last_id], [1, true, 'mcps_operator_local']);
      const page2 = await get(`/v1/mcp_servers?limit=1&after=${page1.body.last_id}`);
      assert.deepEqual([page2.body.data[0].name, page2.body.has_more], ['fixture', false]);
      const page3 = await get(`/v1/mcp_servers?limit=1&after=${page2.body.last_id}`);
      assert.deepEqual([page3.body.data.length, page3.body.has_more], [0, false]);

      const doomed = await post('/v1/mcp_servers', { name: 'doomed', url: fixture.url });
      assert.equal(doomed.status, 201, doomed.text);
      const deleted = await ctx().http.delete('/v1/mcp_servers/doomed').set(ctx().auth);
      assertMatchesSpec(deleted, 'deleteMcpServer');
      assert.deepEqual(deleted.body, { id: doomed.body.id, object: 'mcp_server.deleted', deleted: true });
      assert.equal((await get('/v1/mcp_servers/doomed')).status, 404);

      const operatorDelete = await ctx().http.delete('/v1/mcp_servers/local').set(ctx().auth);
      assertMatchesSpec(operatorDelete, 'deleteMcpServer');
      assert.equal(operatorDelete.status, 403, operatorDelete.text);
    });

    test('bad input is a problem and nothing is stored: not http, credentials in the URL, a taken name, an unknown name', async () => {
      const cases: Array<[object, number, RegExp]> = [
        [{ name: 'ftp', url: 'ftp://example.com/mcp' }, 400, /validation-failed/],
        [{ name: 'creds', url: 'https://user:pass@example.com/mcp' }, 400, /validation-failed/],
        [{ name: 'fixture', url: fixture.url }, 409, /conflict/],
        [{ name: 'local', url: fixture.url }, 409, /conflict/],
        [{ name: 'mcps_x', url: fixture.url }, 400, /validation-failed/],
        [{ name: 'bad name', url: fixture.url }, 400, /validation-failed/],
        [{ name: 'extra', url: fixture.url, command: 'rm' }, 400, /validation-failed/],
      ];
      for (const [body, status, type] of cases) {
        const res = await post('/v1/mcp_servers', body);
        assertMatchesSpec(res, 'createMcpServer');
        assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
        assert.match(res.body.type, type);
        assert.match(String(res.headers['content-type']), /application\/problem\+json/);
      }
      const creds = await post('/v1/mcp_servers', { name: 'creds', url: 'https://user:pass@example.com/mcp' });
      assert.equal(creds.body.errors[0].pointer, '/url');
      assert.ok(!creds.text.includes('pass@'), 'the credentials are not echoed');
      for (const path of ['/v1/mcp_servers/nobody', '/v1/mcp_servers/nobody/tools']) {
        const res = await get(path);
        assert.equal(res.status, 404, res.text);
        assert.match(res.body.type, /not-found/);
      }
      const names = (await get('/v1/mcp_servers')).body.data.map((s: { name: string }) => s.name);
      assert.deepEqual(names, ['local', 'fixture']);
    });

    test("another project sees neither the server nor its tools; the operator's server only where it is allowed", async () => {
      const other = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
      assert.equal((await ctx().http.get('/v1/mcp_servers/fixture').set(other)).status, 404);
      assert.equal((await ctx().http.get('/v1/mcp_servers/fixture/tools').set(other)).status, 404);
      const list = await ctx().http.get('/v1/mcp_servers').set(other);
      assert.deepEqual(
        list.body.data.map((s: { name: string }) => s.name),
        ['local'],
        "the operator's server is every project's; one limited to other projects is nobody's here",
      );
      assert.equal((await get('/v1/mcp_servers/hidden')).status, 404);
      assert.equal((await ctx().http.delete('/v1/mcp_servers/fixture').set(other)).status, 404);
    });

    test('tools are listed with the headers, cached, refreshed on list_changed and on request', async () => {
      const res = await get('/v1/mcp_servers/fixture/tools');
      assertMatchesSpec(res, 'listMcpServerTools');
      assert.equal(res.status, 200, res.text);
      assert.equal(fixture.lastHeaders().authorization, TOKEN, 'the stored header was sent');
      const write = res.body.data.find((t: { name: string }) => t.name === 'write-note');
      assert.equal(write.model_name, 'mcp__fixture__write-note');
      assert.deepEqual(write.annotations, { readOnlyHint: false, destructiveHint: false, idempotentHint: false });
      assert.deepEqual(write.input_schema.required, ['text']);
      assert.equal(res.body.data.find((t: { name: string }) => t.name === 'bad-structured').output_schema.required[0], 'value');
      const sessions = fixture.sessionsOpened();
      const again = await get('/v1/mcp_servers/fixture/tools');
      assert.deepEqual(again.body, res.body, 'answered from the cache');
      assert.equal(fixture.sessionsOpened(), sessions);
      assert.notEqual((await get('/v1/mcp_servers/fixture')).body.tools_listed_at, null);

      await fixture.state.addTool('added.later');
      const deadline = Date.now() + 20_000;
      let names: string[] = [];
      while (Date.now() < deadline && !names.includes('added.later')) {
        names = (await get('/v1/mcp_servers/fixture/tools')).body.data.map((t: { name: string }) => t.name);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(names.includes('added.later'), 'the list_changed notification refreshed the cache');
      const model = (await get('/v1/mcp_servers/fixture/tools')).body.data.find((t: { name: string }) => t.name === 'added.later').model_name;
      assert.equal(model, 'mcp__fixture__added_later');

      const refreshed = await get('/v1/mcp_servers/fixture/tools?refresh=true');
      assertMatchesSpec(refreshed, 'listMcpServerTools');
      assert.equal(refreshed.status, 200);
    });

    test("the operator's stdio server lists its tools", async () => {
      const res = await get('/v1/mcp_servers/local/tools');
      assertMatchesSpec(res, 'listMcpServerTools');
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.data.some((t: { model_name: string }) => t.model_name === 'mcp__local__write-note'));
      assert.notEqual((await get('/v1/mcp_servers/local')).body.tools_listed_at, null);
    });

    test('a server out of reach is a 502 problem, at once; a refused address is egress-denied', async () => {
      const closed = await post('/v1/mcp_servers', { name: 'closed', url: `http://127.0.0.1:${await freePort()}/mcp` });
      assert.equal(closed.status, 201, closed.text);
      const res = await get('/v1/mcp_servers/closed/tools');
      assertMatchesSpec(res, 'listMcpServerTools');
      assert.equal(res.status, 502, res.text);
      assert.match(res.body.type, /upstream-unavailable/);
      assert.match(res.body.detail, /"closed" could not be reached: the connection was refused/);

      const metadata = await post('/v1/mcp_servers', {
        name: 'metadata',
        url: 'http://169.254.169.254/mcp',
        headers: { 'X-Key': 'metadata-secret-value-123' },
      });
      assert.equal(metadata.status, 201, metadata.text);
      const denied = await get('/v1/mcp_servers/metadata/tools');
      assert.equal(denied.status, 403, denied.text);
      assert.match(denied.body.type, /egress-denied/);
      assert.ok(!denied.text.includes('metadata-secret'), 'no header value in the problem');
    });
  },
  {
    secretKey: SECRET_KEY,
    mcpStdioServersFile: stdioServersFile([
      { name: 'local', command: process.execPath, args: ['--import', 'tsx', FIXTURE, 'stdio'], env: { FIXTURE_SECRET: 'x' }, cwd: ROOT, projects: null },
      { name: 'hidden', command: process.execPath, args: ['--import', 'tsx', FIXTURE, 'stdio'], env: {}, cwd: ROOT, projects: ['proj_someone_else'] },
    ]),
  },
);
