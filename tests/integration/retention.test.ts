// Retention on both stores: compaction keeps a finished response whole (its
// state, its items) with its terminal event alone, which a late reader of its
// stream still gets, from -1 or from any id it had seen; deletion removes
// finished responses with their journal, tool calls and idempotency records,
// leaving their sessions' items; responses that wait are never touched; and a
// pass of the housekeeping loop counts what it did in the metrics.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { retain } from '../../cli/hub.js';
import { compactFinished, deleteFinished, responseIdFloor, runRetention } from '../../core/responses/retention.js';
import { createLogger } from '../../core/logger.js';
import { Metrics } from '../../core/metrics.js';
import { newId } from '../../core/ids.js';
import { createAgent, createSession, respond } from '../support/api.js';
import { describeEachStore, testConfig } from '../support/hub.js';
import { parseSse } from '../support/sse.js';

const STORY = 'one two three four five six seven eight';

await describeEachStore('retention of finished responses', (ctx) => {
  const db = () => ctx().hub.kernel.db;
  const count = async (table: string, column: string, id: string) =>
    (await db().query<{ n: number }>(`SELECT count(*)::integer AS n FROM ${table} WHERE ${column} = $1`, [id])).rows[0].n;
  const events = async (id: string) =>
    (await db().query<{ sequence: number; type: string }>('SELECT sequence, type FROM response_events WHERE response_id = $1 ORDER BY sequence', [id])).rows;
  const read = async (id: string) => (await ctx().http.get(`/v1/responses/${id}`).set(ctx().auth)).body;
  const stream = async (id: string, after: number) => {
    const res = await ctx()
      .http.get(`/v1/responses/${id}/events?starting_after=${after}`)
      .set(ctx().auth)
      .buffer(true)
      .parse((r, done) => {
        let text = '';
        r.on('data', (chunk: Buffer) => (text += chunk.toString()));
        r.on('end', () => done(null, text));
      });
    return { status: res.status, events: res.status === 200 ? parseSse(res.body as string) : [] };
  };
  /** Everything created so far is older than this. */
  const later = () => Date.now() + 60_000;

  before(async () => {
    await createAgent(ctx, { name: 'teller', model: { provider: 'fake', script: [{ text: STORY }] } });
    await createAgent(ctx, {
      name: 'asker',
      tools: [{ type: 'builtin', name: 'echo' }],
      approval: { tools: ['echo'] },
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'may I' } }] }] },
    });
  });

  test('an id floor sorts below every id minted at or after its time, above those before', () => {
    const at = Date.now();
    assert.ok(newId('resp', at - 1) < responseIdFloor(at));
    assert.ok(newId('resp', at) >= responseIdFloor(at));
    assert.ok(newId('resp', at + 1) > responseIdFloor(at));
  });

  test('compaction keeps the response as it was and its terminal event, which late readers still get', async () => {
    const finished = await respond(ctx, { model: 'teller', input: 'tell' });
    const waiting = await respond(ctx, { model: 'asker', input: 'ask' });
    assert.equal(waiting.palai_status, 'waiting_for_approval');
    const journal = await events(finished.id);
    const waitingJournal = await events(waiting.id);
    assert.ok(journal.length > 8, 'word by word');
    const before = await read(finished.id);

    // Not old enough: nothing.
    assert.deepEqual(await compactFinished(db(), 3_600_000, 100), { responses: 0, rows: 0 });
    const pass = await compactFinished(db(), 0, 100, later());
    assert.ok(pass.responses >= 1);
    const kept = await events(finished.id);
    assert.deepEqual(kept, [journal.at(-1)], 'the terminal event alone');
    assert.deepEqual(await read(finished.id), before, 'the response reads as before');
    assert.deepEqual(await events(waiting.id), waitingJournal, 'a waiting response is not touched');

    for (const after of [-1, 3]) {
      const late = await stream(finished.id, after);
      assert.equal(late.status, 200, `from ${after}`);
      assert.deepEqual(
        late.events.map((e) => e.event),
        ['response.completed'],
        `a reader from ${after} gets the terminal event`,
      );
      assert.equal(late.events[0].data.response.output_text, STORY);
    }
    assert.equal((await stream(finished.id, journal.at(-1)!.sequence + 1)).status, 400, 'beyond the journal is still refused');
    assert.equal((await compactFinished(db(), 0, 100, later())).responses, 0, 'compacted once');
  });

  test('deletion removes finished responses with their rows; sessions keep their items; waiting ones stay', async () => {
    const session = await createSession(ctx, { agent: 'teller' });
    const inSession = await respond(ctx, { model: 'teller', input: 'in a session', session_id: session.id });
    const keyed = await ctx().http.post('/v1/responses').set(ctx().auth).set('Idempotency-Key', 'retained-key').send({ model: 'teller', input: 'keyed' });
    assert.equal(keyed.status, 200);
    const continued = await respond(ctx, { model: 'teller', input: 'more', previous_response_id: keyed.body.id });
    const waiting = await respond(ctx, { model: 'asker', input: 'ask again' });
    const items = await count('session_items', 'session_id', session.id);
    assert.ok(items >= 2);
    assert.equal(await count('idempotency_keys', 'resource_id', keyed.body.id), 1);

    // Two per batch: the pass takes several, and a response continuing from one in its batch is no obstacle.
    const pass = await runRetention(db(), { compactAfterMs: null, deleteAfterMs: 0, batchSize: 2 }, later());
    assert.ok(pass.deleted.responses >= 3, JSON.stringify(pass));
    for (const id of [inSession.id, keyed.body.id, continued.id]) {
      assert.equal((await ctx().http.get(`/v1/responses/${id}`).set(ctx().auth)).status, 404, id);
      assert.equal(await count('response_events', 'response_id', id), 0);
      assert.equal(await count('tool_calls', 'response_id', id), 0);
    }
    assert.equal(await count('idempotency_keys', 'resource_id', keyed.body.id), 0, 'its inbox record is gone');
    assert.equal(await count('session_items', 'session_id', session.id), items, 'the session keeps its items');
    assert.equal((await read(waiting.id)).palai_status, 'waiting_for_approval', 'a waiting response stays');
    assert.deepEqual(await runRetention(db(), { compactAfterMs: null, deleteAfterMs: 0 }, later()), {
      compacted: { responses: 0, rows: 0 },
      deleted: { responses: 0, rows: 0 },
    });
  });

  test('a housekeeping pass counts what it compacted and deleted in the metrics', async () => {
    await respond(ctx, { model: 'teller', input: 'count me' });
    const metrics = new Metrics(db());
    // Ages of 1 s, with every response made in this test at least that old: wait it out.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await retain(db(), { ...testConfig(), retentionCompactAfterMs: 1000, retentionDeleteAfterMs: null }, metrics, createLogger('silent'));
    const text = await metrics.registry.metrics();
    const compacted = Number(/^palai_retention_responses_total\{action="compacted"\} (\d+)$/m.exec(text)?.[1]);
    const rows = Number(/^palai_retention_rows_total\{action="compacted"\} (\d+)$/m.exec(text)?.[1]);
    assert.ok(compacted >= 1 && rows >= 8, text);
  });
});
