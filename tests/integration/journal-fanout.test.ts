// Many followers of one response: each append wakes all of them, and they share
// the read that follows instead of each reading the journal on its own; every
// follower still gets every event in order and ends at the terminal one. The
// followers' poll is a minute, so a follower that missed a wake-up would hang
// the test instead of catching up quietly.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAgent } from '../../core/agents/agents.js';
import { createProject } from '../../core/auth/projects.js';
import { appendEvent, followEvents, type JournalEntry, type KernelEvent } from '../../core/journal/journal.js';
import { Wakeups } from '../../core/journal/wakeups.js';
import { admitResponse } from '../../core/responses/admission.js';
import { claimNext } from '../../core/runner/claim.js';
import type { Db, Queryable, StoreKind } from '../../core/store/db.js';
import { migrate } from '../../core/store/migrate.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';

const FOLLOWERS = 20;
const ROUNDS = 5;

/** The store, counting the journal reads (and end checks) made through it. */
function countingReads(db: Db): { db: Db; reads: () => number } {
  let reads = 0;
  const count = (sql: string) => {
    // The journal read, and the check for an end a follower makes when a read comes back empty.
    if (/^SELECT e\.sequence, e\.type, e\.data FROM response_journal j .* AND j\.last_sequence > \$2 |^SELECT NOT EXISTS \(SELECT 1 FROM responses/.test(sql))
      reads++;
  };
  const counted: Db = {
    kind: db.kind,
    query: (sql, params) => (count(sql), db.query(sql, params)),
    exec: (sql) => db.exec(sql),
    transaction: (work) =>
      db.transaction((tx: Queryable) => work({ query: (sql, params) => (count(sql), tx.query(sql, params)), exec: (sql) => tx.exec(sql) })),
    listen: (channel, onMessage) => db.listen(channel, onMessage),
    close: () => db.close(),
  };
  return { db: counted, reads: () => reads };
}

async function suite(kind: StoreKind) {
  const unavailable = kind === 'postgres' ? await postgresUnavailable() : null;
  describe(`journal fan-out [${kind}]`, { skip: unavailable ?? false }, () => {
    let database: TestDatabase;
    let projectId: string;
    before(async () => {
      database = await openTestDatabase(kind);
      await migrate(database.db);
      projectId = (await createProject(database.db, 'fanout')).id;
      await createAgent(database.db, projectId, { name: 'fan', model: { provider: 'fake' } });
    });
    after(() => database.drop());

    test(`${FOLLOWERS} followers of one response share each read, and each gets every event once, in order`, { timeout: 30_000 }, async () => {
      const { db, reads } = countingReads(database.db);
      const wakeups = new Wakeups(db);
      await wakeups.start();
      try {
        const row = await admitResponse(database.db, projectId, { agent: 'fan', input: [{ role: 'user', content: 'x' }] });
        const claim = (await claimNext(database.db, 'fanout-worker', 60))!;
        assert.equal(claim.responseId, row.id);
        const writer = { projectId, responseId: row.id, leaseToken: claim.leaseToken };
        const followers = Array.from({ length: FOLLOWERS }, async () => {
          const seen: JournalEntry[] = [];
          for await (const entry of followEvents(db, wakeups, row.id, { after: 0, pollMs: 60_000 })) seen.push(entry);
          return seen;
        });
        // Each round: one append, whose NOTIFY wakes every follower.
        const readsBefore = reads();
        for (let round = 0; round < ROUNDS; round++) {
          const delta: KernelEvent = { type: 'text.delta', item_id: 'msg_fan', output_index: 0, content_index: 0, delta: `w${round} ` };
          await appendEvent(database.db, writer, delta);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await appendEvent(database.db, writer, { type: 'status', status: 'completed' } as KernelEvent);
        const results = await Promise.all(followers);
        const expected = results[0].map((entry) => entry.sequence);
        assert.equal(expected.length, ROUNDS + 1, 'every delta and the terminal event');
        assert.deepEqual(
          expected,
          [...expected].sort((a, b) => a - b),
        );
        for (const seen of results)
          assert.deepEqual(
            seen.map((entry) => entry.sequence),
            expected,
          );
        const live = reads() - readsBefore;
        // Unshared, each wake-up would cost a read per follower, and a caught-up
        // follower that read again would find nothing and check for an end:
        // up to 3 × FOLLOWERS queries an append. Shared, about one.
        assert.ok(live <= 2 * (ROUNDS + 1), `${live} journal queries for ${ROUNDS + 1} appends and ${FOLLOWERS} followers`);
      } finally {
        await wakeups.stop();
      }
    });
  });
}

for (const kind of storeKinds) await suite(kind);
