// The project feed: every response's events of one project in a global order
// from a cursor, then live. What it must prove: projects are kept apart, a
// cursor resumes exactly where it left off, and no event is ever skipped — an
// event committed late by a transaction that began early is held back until it
// can no longer land before a cursor already handed out.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { KernelEvent } from '../../generated/protocol-schemas.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { appendEvent } from '../../core/journal/journal.js';
import { FEED_START, followProjectEvents, latestCursor, readProjectEvents, type FeedCursor, type FeedEntry } from '../../core/journal/project-feed.js';
import { Wakeups } from '../../core/journal/wakeups.js';
import type { Db, Queryable, StoreKind } from '../../core/store/db.js';
import { loadMigrations, migrate } from '../../core/store/migrate.js';
import { random, testSeed } from '../support/seeded-random.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';

const PROJECT_A = 'proj_feed_a';
const PROJECT_B = 'proj_feed_b';

/** A response of the project's one agent, in the fewest columns the schema requires. */
async function insertResponse(db: Queryable, projectId: string, id: string): Promise<void> {
  await db.query(
    "INSERT INTO responses (id, project_id, agent_id, agent_revision_id, status, input) VALUES ($1, $2, $2 || '_agent', $2 || '_rev', 'in_progress', '[]')",
    [id, projectId],
  );
}

/** A project with one agent and the given responses. */
async function seedProject(db: Queryable, projectId: string, responses: string[]): Promise<void> {
  await db.query('INSERT INTO projects (id, name) VALUES ($1, $1)', [projectId]);
  await db.query("INSERT INTO agents (id, project_id, name, current_revision) VALUES ($1 || '_agent', $1, 'feed', 1)", [projectId]);
  await db.query("INSERT INTO agent_revisions (id, project_id, agent_id, revision, spec) VALUES ($1 || '_rev', $1, $1 || '_agent', 1, '{}')", [projectId]);
  for (const id of responses) await insertResponse(db, projectId, id);
}

let deltaCount = 0;
/** A distinct text delta, so entries can be told apart by their text. */
const delta = (): KernelEvent => ({ type: 'text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: `d${deltaCount++}` });
const textDone = (text: string): KernelEvent => ({ type: 'text.done', item_id: 'msg_1', output_index: 0, content_index: 0, text });

/** Appends through the journal writer, unchanged: the feed columns come from the schema alone. */
async function append(db: Queryable, projectId: string, responseId: string, event: KernelEvent): Promise<KernelEvent> {
  await appendEvent(db, { projectId, responseId, leaseToken: null }, event);
  return event;
}

/** The whole feed after `from`, read in pages of `pageSize`. */
async function readAll(db: Queryable, projectId: string, from: FeedCursor, pageSize = 500): Promise<FeedEntry[]> {
  const all: FeedEntry[] = [];
  for (let cursor = from; ;) {
    const page = await readProjectEvents(db, projectId, cursor, pageSize);
    all.push(...page);
    if (page.length < pageSize) return all;
    cursor = page[page.length - 1].cursor;
  }
}

/** Reads until `done` holds: on a shared server another session's open transaction may hold the horizon a while. */
async function readUntil(db: Queryable, projectId: string, from: FeedCursor, done: (entries: FeedEntry[]) => boolean): Promise<FeedEntry[]> {
  for (;;) {
    const entries = await readAll(db, projectId, from);
    if (done(entries)) return entries;
    await sleep(20);
  }
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

const positionOf = (cursor: FeedCursor): bigint => BigInt(cursor.split('.')[1]);
/** What tells this file's events apart: a delta's or a done event's text. */
const textOf = (event: KernelEvent): string => (event.type === 'text.delta' ? event.delta : event.type === 'text.done' ? event.text : event.type);
const texts = (entries: FeedEntry[]): string[] => entries.map((e) => textOf(e.event));

async function suite(kind: StoreKind) {
  const unavailable = kind === 'postgres' ? await postgresUnavailable() : null;
  describe(`project feed [${kind}]`, { skip: unavailable ?? false }, () => {
    let database: TestDatabase;
    let db: Db;
    let wakeups: Wakeups;
    let responseCount = 0;
    /** A fresh response in `projectId`, so each test's journal starts empty. */
    const newResponse = async (projectId: string): Promise<string> => {
      const id = `resp_feed_${kind}_${responseCount++}`;
      await insertResponse(db, projectId, id);
      return id;
    };

    before(async () => {
      database = await openTestDatabase(kind);
      db = database.db;
      await migrate(db);
      await seedProject(db, PROJECT_A, []);
      await seedProject(db, PROJECT_B, []);
      wakeups = new Wakeups(db);
      await wakeups.start();
    });
    after(async () => {
      await wakeups.stop();
      await database.drop();
    });

    test("a project's feed holds its own events only, each with its response and sequence", async () => {
      const [a1, a2, b1] = [await newResponse(PROJECT_A), await newResponse(PROJECT_A), await newResponse(PROJECT_B)];
      const startA = await latestCursor(db, PROJECT_A);
      const startB = await latestCursor(db, PROJECT_B);
      const wantA = [await append(db, PROJECT_A, a1, delta()), await append(db, PROJECT_A, a2, delta())];
      const wantB = [await append(db, PROJECT_B, b1, delta())];
      wantA.push(await append(db, PROJECT_A, a1, delta()));

      const feedA = await readUntil(db, PROJECT_A, startA, (e) => e.length >= 3);
      const feedB = await readUntil(db, PROJECT_B, startB, (e) => e.length >= 1);
      assert.deepEqual(
        feedA.map((e) => e.event),
        wantA,
      );
      assert.deepEqual(
        feedA.map((e) => [e.responseId, e.sequence]),
        [
          [a1, 0],
          [a2, 0],
          [a1, 1],
        ],
      );
      assert.deepEqual(
        feedB.map((e) => e.event),
        wantB,
      );
      assert.deepEqual(
        feedB.map((e) => [e.responseId, e.sequence]),
        [[b1, 0]],
      );
    });

    test('events come in commit order across responses, and resuming from any cursor yields exactly the rest', async () => {
      const seed = testSeed();
      const next = random(seed);
      const responses = [await newResponse(PROJECT_A), await newResponse(PROJECT_A), await newResponse(PROJECT_A)];
      const start = await latestCursor(db, PROJECT_A);
      const want: string[] = [];
      // A seeded schedule of single appends and multi-event transactions over three responses.
      for (let step = 0; step < 40; step++) {
        const pick = () => responses[Math.floor(next() * responses.length)];
        if (next() < 0.3) {
          const events = await db.transaction(async (tx) => [await append(tx, PROJECT_A, pick(), delta()), await append(tx, PROJECT_A, pick(), delta())]);
          want.push(...events.map(textOf));
        } else {
          want.push(textOf(await append(db, PROJECT_A, pick(), delta())));
        }
      }

      const all = await readUntil(db, PROJECT_A, start, (e) => e.length >= want.length);
      assert.deepEqual(texts(all), want, `seed ${seed} (PALAI_TEST_SEED replays it)`);
      for (const id of responses) {
        const sequences = all.filter((e) => e.responseId === id).map((e) => e.sequence);
        assert.deepEqual(
          sequences,
          sequences.map((_, i) => i),
          `seed ${seed}: ${id} in sequence order`,
        );
      }
      assert.deepEqual(texts(await readAll(db, PROJECT_A, start, 7)), want, `seed ${seed}: paging changes nothing`);
      for (const [index, entry] of all.entries()) {
        assert.deepEqual(texts(await readAll(db, PROJECT_A, entry.cursor, 5)), want.slice(index + 1), `seed ${seed}: resume after #${index}`);
      }
      assert.equal(await latestCursor(db, PROJECT_A), all[all.length - 1].cursor);
    });

    test('the type filter keeps only the asked types, and its cursors resume the full feed', async () => {
      const id = await newResponse(PROJECT_A);
      const start = await latestCursor(db, PROJECT_A);
      await append(db, PROJECT_A, id, delta());
      await append(db, PROJECT_A, id, textDone('first'));
      await append(db, PROJECT_A, id, delta());
      const last = await append(db, PROJECT_A, id, textDone('second'));
      await readUntil(db, PROJECT_A, start, (e) => e.length >= 4);

      const done = await readProjectEvents(db, PROJECT_A, start, 500, ['text.done']);
      assert.deepEqual(texts(done), ['first', 'second']);
      const rest = await readProjectEvents(db, PROJECT_A, done[0].cursor);
      assert.equal(rest.length, 2);
      assert.deepEqual(rest[1].event, last);
    });

    if (kind === 'postgres') {
      test('an event committed after a later one is held back until its transaction ends, so no cursor passes it', async () => {
        const [early, late] = [await newResponse(PROJECT_A), await newResponse(PROJECT_A)];
        const start = await latestCursor(db, PROJECT_A);
        const appended = gate();
        const release = gate();
        // Transaction A appends first (lower position, lower transaction id) and stays open.
        const transactionA = db.transaction(async (tx) => {
          await append(tx, PROJECT_A, early, textDone('A'));
          appended.open();
          await release.wait;
        });
        await appended.wait;
        try {
          // Transaction B appends after it and commits at once.
          await append(db, PROJECT_A, late, textDone('B'));
          const committed = await db.query<{ n: number }>('SELECT count(*)::integer AS n FROM response_events WHERE response_id = $1', [late]);
          assert.equal(committed.rows[0].n, 1, "B's event is committed and visible to a plain query");
          // A reader by position alone would hand out B's cursor now and never see A. The feed shows neither.
          assert.deepEqual(await readAll(db, PROJECT_A, start), []);
          assert.equal(await latestCursor(db, PROJECT_A), start);
        } finally {
          release.open();
          await transactionA;
        }
        const feed = await readUntil(db, PROJECT_A, start, (e) => e.length >= 2);
        assert.deepEqual(texts(feed), ['A', 'B']);
        assert.ok(positionOf(feed[0].cursor) < positionOf(feed[1].cursor), 'A took the lower position before B committed');
      });

      test("a response's events keep their sequence order when the later event's transaction began first", async () => {
        const id = await newResponse(PROJECT_A);
        const start = await latestCursor(db, PROJECT_A);
        const steps = { tookId: gate(), appended: gate(), firstReleased: gate(), secondReleased: gate() };
        // The second writer takes its transaction id first, then appends after the first writer: its
        // append waits on the response row lock, so it gets the next sequence with the older id.
        const second = db.transaction(async (tx) => {
          await tx.query('SELECT pg_current_xact_id()');
          steps.tookId.open();
          await steps.appended.wait;
          await append(tx, PROJECT_A, id, textDone('second'));
          await steps.secondReleased.wait;
        });
        await steps.tookId.wait;
        const first = db.transaction(async (tx) => {
          await append(tx, PROJECT_A, id, textDone('first'));
          steps.appended.open();
          await steps.firstReleased.wait;
        });
        await steps.appended.wait;
        try {
          // Let the second append block on the row lock before the first commits.
          while ((await db.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows.length === 0)
            await sleep(10);
        } finally {
          steps.firstReleased.open();
          await first;
          steps.secondReleased.open();
          await second;
        }

        const feed = await readUntil(db, PROJECT_A, start, (e) => e.length >= 2);
        assert.deepEqual(
          feed.map((e) => [textOf(e.event), e.sequence]),
          [
            ['first', 0],
            ['second', 1],
          ],
        );
      });
    } else {
      // PGlite has one connection: a transaction runs alone, so no other writer can be open
      // while a reader reads, and transaction ids follow commit order. The horizon can still
      // be seen from inside a writing transaction: its own rows are not final until it ends.
      test('a reader inside a writing transaction does not see its uncommitted events', async () => {
        const id = await newResponse(PROJECT_A);
        const start = await latestCursor(db, PROJECT_A);
        const inside = await db.transaction(async (tx) => {
          await append(tx, PROJECT_A, id, textDone('pending'));
          return readAll(tx, PROJECT_A, start);
        });
        assert.deepEqual(inside, []);
        assert.deepEqual(texts(await readAll(db, PROJECT_A, start)), ['pending']);
      });
    }

    test('follow replays from its cursor, yields events appended after it started, and ends on abort', async () => {
      const id = await newResponse(PROJECT_A);
      await append(db, PROJECT_A, id, textDone('before'));
      const start = (await readUntil(db, PROJECT_A, FEED_START, (e) => e.some((x) => x.responseId === id))).at(-1)!.cursor;
      const controller = new AbortController();
      const feed = followProjectEvents(db, wakeups, PROJECT_A, { after: start, signal: controller.signal, pollMs: 200 });
      // Nothing to read yet: this waits for a live event.
      const firstLive = feed.next();
      const live = [await append(db, PROJECT_A, id, textDone('live 1')), await append(db, PROJECT_A, id, textDone('live 2'))];
      const got = [(await firstLive).value as FeedEntry];
      got.push((await feed.next()).value as FeedEntry);
      assert.deepEqual(
        got.map((e) => e.event),
        live,
      );

      const idle = feed.next();
      controller.abort();
      assert.deepEqual(await idle, { done: true, value: undefined });

      // Replaying from the start yields the earlier event too.
      const replay = followProjectEvents(db, wakeups, PROJECT_A, { after: FEED_START, types: ['text.done'], pollMs: 200 });
      const seen: string[] = [];
      for await (const entry of replay) {
        seen.push(textOf(entry.event));
        if (seen.includes('live 2')) break;
      }
      assert.deepEqual(seen.slice(-3), ['before', 'live 1', 'live 2']);
    });

    test("events journaled before the feed existed get positions in each response's sequence order", async () => {
      const older = await openTestDatabase(kind);
      try {
        await migrate(
          older.db,
          loadMigrations().filter((m) => m.version < 8),
        );
        await seedProject(older.db, PROJECT_A, ['resp_old_1', 'resp_old_2']);
        // Stored out of order, and resp_old_2's second event is older than its first
        // (its transaction began first): each response must still read in sequence order.
        const rows: Array<[string, number, string]> = [
          ['resp_old_1', 1, '2024-01-01T00:00:03Z'],
          ['resp_old_2', 1, '2024-01-01T00:00:01Z'],
          ['resp_old_1', 0, '2024-01-01T00:00:02Z'],
          ['resp_old_2', 0, '2024-01-01T00:00:04Z'],
        ];
        for (const [responseId, sequence, at] of rows) {
          await older.db.query(
            "INSERT INTO response_events (project_id, response_id, sequence, type, data, created_at) VALUES ($1, $2, $3, 'text.done', $4, $5)",
            [PROJECT_A, responseId, sequence, JSON.stringify({ item_id: 'msg_1', output_index: 0, content_index: 0, text: `${responseId}#${sequence}` }), at],
          );
        }
        await older.db.query("UPDATE responses SET next_sequence = 2 WHERE id LIKE 'resp_old_%'");
        await migrate(older.db);
        // Another session's open transaction on a shared server may hold the horizon a moment.
        const migrated = await readUntil(older.db, PROJECT_A, FEED_START, (entries) => entries.length >= 4);
        assert.deepEqual(texts(migrated), ['resp_old_1#0', 'resp_old_1#1', 'resp_old_2#0', 'resp_old_2#1']);
        // New events come after the old ones.
        await append(older.db, PROJECT_A, 'resp_old_1', textDone('new'));
        const grown = await readUntil(older.db, PROJECT_A, FEED_START, (entries) => entries.length >= 5);
        assert.deepEqual(texts(grown).at(-1), 'new');
      } finally {
        await older.drop();
      }
    });

    test('a malformed cursor is refused as an invalid request', async () => {
      const invalid = (error: unknown) => error instanceof PalaiError && error.slug === 'invalid-request';
      for (const cursor of [
        'abc',
        '12',
        '1.2.3.4',
        '1.2.2147483648',
        '-1.5',
        '1.-5',
        ' 1.2',
        '1.2 ',
        '1e3.4',
        '18446744073709551616.1',
        '1.9223372036854775808',
      ]) {
        await assert.rejects(readProjectEvents(db, PROJECT_A, cursor), invalid, JSON.stringify(cursor));
      }
      await assert.rejects(followProjectEvents(db, wakeups, PROJECT_A, { after: 'nope' }).next(), invalid);
      assert.deepEqual(await readProjectEvents(db, PROJECT_A, '18446744073709551615.9223372036854775807'), []);
    });
  });
}

for (const kind of storeKinds) await suite(kind);
