// POST /v1/responses with a key this process has authenticated before: the key
// is checked in the request's first statement (the agent's read, or the insert
// that checks a remembered agent), not in one of its own; a key revoked meanwhile (by another process, as `palai keys revoke`
// does) still stops at once, whatever the request, with nothing written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createApiKey, revokeApiKey } from '../../core/auth/api-keys.js';
import { createAgent } from '../support/api.js';
import { describeEachStore, type TestHub } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { StatementLog } from '../support/statement-log.js';

let store: StatementLog;

/** Rows of the project that a refused request must leave as they were. */
async function projectRows(ctx: TestHub): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['responses', 'response_events', 'idempotency_keys', 'sessions', 'session_items']) {
    const { rows } = await ctx.hub.kernel.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE project_id = $1`, [ctx.projectId]);
    counts[table] = rows[0].n;
  }
  return counts;
}

const readsOnlyKeys = (sql: string) => /^\s*SELECT\b[^]*\bFROM api_keys\b/.test(sql) && !/\bagents\b/.test(sql);

await describeEachStore(
  'a recalled key on POST /v1/responses',
  (ctx) => {
    test('a response made with a key this process knows has no statement of its own for the key: the agent read checks it', async () => {
      const { http, hub, projectId } = ctx();
      await createAgent(ctx, { name: 'recall-echo', model: { provider: 'fake' } });
      await createAgent(ctx, { name: 'recall-other', model: { provider: 'fake' } });
      const key = await createApiKey(hub.kernel.db, projectId, 'recalled');
      const auth = { Authorization: `Bearer ${key.secret}` };
      // The first request looks the key up; the process remembers it.
      const first = await http.post('/v1/responses').set(auth).send({ model: 'recall-echo', input: 'first' });
      assert.equal(first.status, 200, first.text);
      // An agent not read before is read, and the read checks the key; one read before is checked by the insert (remembered-agents.test.ts), which checks the key.
      for (const [agent, checker] of [
        ['recall-other', /^\s*SELECT\b/],
        ['recall-echo', /\bINSERT INTO responses\b/],
      ] as const) {
        let res: Awaited<ReturnType<typeof http.post>> | undefined;
        const statements = await store.during(async () => (res = await http.post('/v1/responses').set(auth).send({ model: agent, input: 'again' })));
        assertMatchesSpec(res!, 'createResponse');
        assert.equal(res!.status, 200, res!.text);
        assert.equal(res!.body.status, 'completed');
        assert.deepEqual(
          statements.filter((s) => readsOnlyKeys(s.sql)).map((s) => s.sql),
          [],
          agent,
        );
        // The agent's read, or the insert's check of the remembered agent (the end's UPDATE reads `FROM agents a, …` for its name).
        const agentChecks = statements.filter((s) => /\bFROM agents a (JOIN|WHERE)\b/.test(s.sql));
        assert.equal(agentChecks.length, 1, agent);
        assert.match(agentChecks[0].sql, checker, agent);
        assert.match(agentChecks[0].sql, /\bapi_keys\b/, agent);
      }
    });

    test('a recalled key revoked since stops at once, for every kind of request, with a 401 and nothing written', async () => {
      const { http, hub, projectId, auth: live } = ctx();
      await createAgent(ctx, { name: 'recall-revoked', model: { provider: 'fake' } });
      const earlier = await http.post('/v1/responses').set(live).send({ model: 'recall-revoked', input: 'earlier' });
      assert.equal(earlier.status, 200, earlier.text);
      const requests: Array<[string, (req: ReturnType<typeof http.post>) => ReturnType<typeof http.post>]> = [
        ['a plain run', (req) => req.send({ model: 'recall-revoked', input: 'after' })],
        ['an unknown agent', (req) => req.send({ model: 'no-such-agent', input: 'x' })],
        ['a streamed run', (req) => req.send({ model: 'recall-revoked', input: 'x', stream: true })],
        ['a background run', (req) => req.send({ model: 'recall-revoked', input: 'x', background: true })],
        ['a chained run', (req) => req.send({ model: 'recall-revoked', input: 'x', previous_response_id: earlier.body.id })],
        ['a run in a session', (req) => req.send({ model: 'recall-revoked', input: 'x', session_id: 'ses_00000000000000000000000000' })],
        ['an idempotent run', (req) => req.set('Idempotency-Key', 'recalled-1').send({ model: 'recall-revoked', input: 'x' })],
        ['a body the schema refuses', (req) => req.send({ model: 'recall-revoked', input: 5 })],
        ['malformed JSON', (req) => req.set('Content-Type', 'application/json').send('{"model": "recall-revoked",')],
      ];
      for (const [what, send] of requests) {
        // A key this process has answered a response for (so it recalls it), revoked since by another process.
        const key = await createApiKey(hub.kernel.db, projectId, 'to-revoke');
        const auth = { Authorization: `Bearer ${key.secret}` };
        assert.equal((await http.post('/v1/responses').set(auth).send({ model: 'recall-revoked', input: 'before' })).status, 200, what);
        assert.ok(await revokeApiKey(hub.kernel.db, key.id));
        const before = await projectRows(ctx());
        // Twice: a key refused once is forgotten, and the next request looks it up.
        for (const attempt of ['recalled', 'looked up']) {
          const res = await send(http.post('/v1/responses').set(auth));
          assert.equal(res.status, 401, `${what}, ${attempt}: ${res.text}`);
          assertProblem(res, 401, 'unauthorized');
          assert.match(String(res.headers['www-authenticate']), /^Bearer /, what);
        }
        assert.deepEqual(await projectRows(ctx()), before, `${what}: a refused request wrote something`);
      }
    });

    test('a recalled key that is still live hears what it would have: agent-not-found for an unknown agent or one of another project', async () => {
      const { http, auth } = ctx();
      const agent = await createAgent(ctx, { name: 'recall-mine', model: { provider: 'fake' } });
      assert.equal((await http.post('/v1/responses').set(auth).send({ model: 'recall-mine', input: 'warm' })).status, 200);
      assertProblem(await http.post('/v1/responses').set(auth).send({ model: 'recall-nobody', input: 'x' }), 404, 'agent-not-found');
      const other = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
      assertProblem(await http.post('/v1/responses').set(other).send({ model: 'other-warm', input: 'x' }), 404, 'agent-not-found');
      // Now recalled, the other project's key reads only its own project's agents.
      assertProblem(await http.post('/v1/responses').set(other).send({ model: agent.id, input: 'x' }), 404, 'agent-not-found');
      assertProblem(await http.post('/v1/responses').set(other).send({ model: 'recall-mine', input: 'x' }), 404, 'agent-not-found');
    });
  },
  {},
  { store: (db) => (store = new StatementLog(db)) },
);
