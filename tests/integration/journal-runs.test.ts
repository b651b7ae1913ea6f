// The journal writes an append as one row (core/journal/journal-rows.ts): a
// 20-word answer is three rows for twenty-eight events. Readers must not see the
// difference: resuming after any sequence, inside a row or at its end, gives
// exactly the events after it — per response, over SSE and in the project feed —
// a live follower still gets each delta as it is written, and an append that does
// not fit the compact entries reads back as written.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { appendEvents, followEvents, readEvents, type JournalEntry, type KernelEvent } from '../../core/journal/journal.js';
import { readProjectEvents, FEED_START } from '../../core/journal/project-feed.js';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { parseSse } from '../support/sse.js';
import { until } from '../support/until.js';

const WORDS = Array.from({ length: 20 }, (_, i) => `word${i}`).join(' ');

describeEachStore('journal runs', (ctx) => {
  const db = () => ctx().hub.kernel.db;
  const rowsOf = async (responseId: string) =>
    (await db().query<{ n: number }>('SELECT count(*)::integer AS n FROM response_journal WHERE response_id = $1', [responseId])).rows[0].n;
  const allEvents = (responseId: string) => readEvents(db(), responseId, -1, 10_000);

  before(async () => {
    await createAgent(ctx, { name: 'twenty', model: { provider: 'fake', script: [{ text: WORDS }] } });
    await createAgent(ctx, { name: 'paced', model: { provider: 'fake', script: [{ text: 'one two three four five', delay_ms: 30 }] } });
  });

  test('a 20-word answer is a few rows, and resuming after any sequence reads exactly the events after it', async () => {
    const done = await respond(ctx, { model: 'twenty', input: 'go' });
    const events = await allEvents(done.id);
    assert.deepEqual(
      events.map((e) => e.sequence),
      events.map((_, i) => i),
    );
    assert.equal(events.filter((e) => e.event.type === 'text.delta').length, 20);
    assert.ok((await rowsOf(done.id)) <= 3, `${await rowsOf(done.id)} rows for ${events.length} events`);
    for (let after = -1; after < events.length; after++) {
      assert.deepEqual(await readEvents(db(), done.id, after, 10_000), events.slice(after + 1), `after ${after}`);
      assert.deepEqual(await readEvents(db(), done.id, after, 1), events.slice(after + 1, after + 2), `one after ${after}`);
      const followed: JournalEntry[] = [];
      for await (const entry of followEvents(db(), ctx().hub.kernel.wakeups, done.id, { after })) followed.push(entry);
      assert.deepEqual(followed, events.slice(after + 1), `following after ${after}`);
    }
    // The terminal event is rebuilt from the response row: the response as GET answers it.
    const terminal = events.at(-1)!.event;
    assert.equal(terminal.type, 'status');
    assert.deepEqual(terminal.type === 'status' && terminal.response, await ctx().hub.api.responses.get(ctx().projectId, done.id));
  });

  test('an SSE stream resumed with starting_after inside a row sends the rest of it, with their own ids', async () => {
    const { http, auth } = ctx();
    const done = await respond(ctx, { model: 'twenty', input: 'go' });
    const full = parseSse((await http.get(`/v1/responses/${done.id}`).query({ stream: true }).set(auth)).text);
    for (const after of [2, 3, 10, 23, 25]) {
      const resumed = parseSse((await http.get(`/v1/responses/${done.id}`).query({ stream: true, starting_after: after }).set(auth)).text);
      const rest = full.filter((f) => Number(f.id) > after);
      assert.deepEqual(
        resumed.map((f) => [f.id, f.data]),
        rest.map((f) => [f.id, f.data]),
        `starting_after ${after}`,
      );
    }
  });

  test('a live follower gets each delta of a paced answer as it is written', async () => {
    const admitted = await ctx().hub.api.responses.admit(ctx().projectId, { agent: 'paced', input: [{ role: 'user', content: 'go' }] });
    const seen: JournalEntry[] = [];
    for await (const entry of ctx().hub.api.responses.follow(ctx().projectId, admitted.id, { after: -1 })) seen.push(entry);
    const deltas = seen.filter((e) => e.event.type === 'text.delta').map((e) => (e.event.type === 'text.delta' ? e.event.delta : ''));
    assert.deepEqual(deltas, ['one', ' two', ' three', ' four', ' five']);
    assert.deepEqual(seen, await allEvents(admitted.id));
  });

  test('the project feed resumes after any event inside a row, and from a row cursor', async () => {
    const done = await respond(ctx, { model: 'twenty', input: 'go' });
    const events = await allEvents(done.id);
    // The feed reads below the server's snapshot horizon: a transaction open anywhere on it holds the last rows back a while.
    const feed = await until('the feed holds the whole response', async () => {
      const read = (await readProjectEvents(db(), ctx().projectId, FEED_START, 100_000)).filter((e) => e.responseId === done.id);
      return read.length === events.length && read;
    });
    assert.deepEqual(
      feed.map((e) => ({ sequence: e.sequence, event: e.event })),
      events,
    );
    assert.ok(feed.some((e) => e.cursor.split('.').length === 3) && feed.some((e) => e.cursor.split('.').length === 2));
    for (const [i, entry] of feed.entries()) {
      const rest = (await readProjectEvents(db(), ctx().projectId, entry.cursor, 100_000)).filter((e) => e.responseId === done.id);
      assert.deepEqual(rest, feed.slice(i + 1), `after ${entry.cursor}`);
    }
  });

  test('events that do not fit a compact entry read back as written', async () => {
    const admitted = await ctx().hub.api.responses.admit(ctx().projectId, { agent: 'paced', input: [{ role: 'user', content: 'go' }], background: true });
    await ctx().hub.api.responses.cancel(ctx().projectId, admitted.id);
    await ctx().hub.api.responses.waitUntilSettled(ctx().projectId, admitted.id, 10_000);
    const writer = { projectId: ctx().projectId, responseId: admitted.id, leaseToken: null };
    const at = (id: string, o: number) => ({ item_id: id, output_index: o, content_index: 0 });
    const part = (text: string) => ({ type: 'output_text' as const, text, annotations: [] });
    const message = (id: string, status: 'in_progress' | 'completed' | 'incomplete', content: ReturnType<typeof part>[]) => ({
      id,
      type: 'message' as const,
      role: 'assistant' as const,
      status,
      content,
    });
    const batches: KernelEvent[][] = [
      // An opening with no content.added after it, then deltas of another item.
      [
        { type: 'item.added', output_index: 7, item: message('msg_x', 'in_progress', []) },
        { type: 'text.delta', ...at('msg_y', 8), delta: 'a' },
        { type: 'text.delta', ...at('msg_y', 8), delta: 'b' },
      ],
      // A closing cut short (text.done, content.done, then something else), and one with a wrong text.
      [
        { type: 'text.done', ...at('msg_y', 8), text: 'ab' },
        { type: 'content.done', ...at('msg_y', 8), part: part('ab') },
        { type: 'text.delta', ...at('msg_y', 8), delta: 'c' },
        { type: 'text.done', ...at('msg_y', 8), text: 'abc' },
        { type: 'content.done', ...at('msg_y', 8), part: part('abc') },
        { type: 'item.done', output_index: 8, item: message('msg_y', 'completed', [part('abX')]) },
      ],
      // Whole messages: one closed with text its entry's deltas do not spell, one closed incomplete alone, one with an annotation.
      [
        { type: 'text.delta', ...at('msg_z', 9), delta: 'z' },
        { type: 'text.done', ...at('msg_z', 9), text: 'zz' },
        { type: 'content.done', ...at('msg_z', 9), part: part('zz') },
        { type: 'item.done', output_index: 9, item: message('msg_z', 'completed', [part('zz')]) },
        { type: 'item.done', output_index: 10, item: message('msg_w', 'incomplete', [part('half')]) },
        { type: 'content.added', ...at('msg_v', 11), part: { type: 'output_text', text: '', annotations: [{ note: 1 }] } as never },
      ],
      [{ type: 'text.delta', ...at('msg_q', 12), delta: 'alone' }],
    ];
    for (const batch of batches) {
      const first = await appendEvents(db(), writer, batch);
      const read = await readEvents(db(), admitted.id, first - 1, batch.length);
      assert.deepEqual(
        read.map((e) => e.event),
        batch,
      );
      assert.deepEqual(
        read.map((e) => e.sequence),
        batch.map((_, i) => first + i),
      );
    }
  });
});
