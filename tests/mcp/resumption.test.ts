// A tools/call stream that drops is resumed with Last-Event-ID and continues
// from the journal: the progress the host already had is not sent again, the
// rest is, and the result arrives — read from the journal, not from memory, so
// the resumed stream may be served by another hub on the same database.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHub, type Hub } from '../../cli/hub.js';
import { createLogger } from '../../core/logger.js';
import { PgDb } from '../../core/store/pg-db.js';
import { createAgent } from '../support/api.js';
import { describeEachStore, testConfig } from '../support/hub.js';
import { balancer, connect, listen, type Listening } from './mcp-client.js';

const WORDS = 'alpha beta gamma delta epsilon zeta eta theta iota kappa';

await describeEachStore('MCP stream resumption', (ctx) => {
  const servers: Listening[] = [];
  let second: Hub | null = null;
  before(async () => {
    servers.push(await listen(ctx().hub.app));
    await createAgent(ctx, { name: 'talker', model: { provider: 'fake', script: [{ text: WORDS, delay_ms: 40 }] } });
    // PostgreSQL: a second hub on the same database, as a second process would be.
    if (ctx().kind === 'postgres') {
      const { rows } = await ctx().hub.kernel.db.query<{ db: string }>('SELECT current_database() AS db');
      const admin = new URL(process.env.PALAI_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
      admin.pathname = `/${rows[0].db}`;
      second = await startHub({ config: testConfig(), db: new PgDb(admin.toString(), 5), logger: createLogger('silent') });
      servers.push(await listen(second.app));
    }
  });
  after(async () => {
    for (const server of servers) await server.close();
    if (second) {
      await second.close();
      await second.kernel.db.close();
    }
  });

  test('a dropped tools/call stream resumes from its last event id: no progress twice, none lost, the result arrives', async () => {
    const lb = balancer(
      servers.map((s) => s.url),
      4,
    );
    const { client } = await connect(servers[0].url, ctx().apiKey, { fetch: lb.fetch });
    const progress: number[] = [];
    const result = await client.callTool({ name: 'talker', arguments: { input: 'go' } }, CallToolResultSchema, {
      onprogress: (p) => progress.push(p.progress),
    });
    assert.deepEqual(result.content, [{ type: 'text', text: WORDS }]);
    assert.ok(
      lb.log.some((line) => line.includes('resume')),
      `the client resumed with a GET: ${lb.log.join(', ')}`,
    );
    assert.deepEqual(
      progress,
      [...new Set(progress)].sort((a, b) => a - b),
      'each progress value once, in order',
    );
    const responseId = (result._meta as Record<string, string>)['palai/response_id'];
    const journal = await ctx().hub.api.responses.events(ctx().projectId, responseId, -1, 1000);
    assert.deepEqual(
      progress,
      journal.map((e) => e.sequence + 1),
      'one progress notification per journal event',
    );
    if (servers.length > 1) assert.ok(new Set(lb.log.map((line) => line.split(' ').pop())).size > 1, 'both hubs served the session');
    await client.close();
  });

  test('one session is served by every hub: initialize on one, the next requests on the other', async () => {
    const lb = balancer(servers.map((s) => s.url));
    const { client, transport } = await connect(servers[0].url, ctx().apiKey, { fetch: lb.fetch });
    for (let i = 0; i < 3; i++) {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'talker'));
    }
    const result = await client.callTool({ name: 'talker', arguments: { input: 'go' } });
    assert.deepEqual(result.content, [{ type: 'text', text: WORDS }]);
    assert.ok(transport.sessionId);
    await client.close();
  });
});
