// The inbox: one piece of work per (project, source, key), whichever surface the
// key came from; a repeat replays, a different request under the key is refused.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createProject } from '../../core/auth/projects.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { recordAnswer, reserveKey } from '../../core/idempotency/idempotency.js';
import { createInbox } from '../../core/idempotency/inbox.js';
import type { IdempotencyClaim, Inbox, InboxIdentity, InboxRecord, InboxSource } from '../../core/idempotency/inbox-port.js';
import type { Db, StoreKind } from '../../core/store/db.js';
import { loadMigrations, migrate } from '../../core/store/migrate.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';
// The wings declare their inbox sources; the hub loads them, this suite names them.
import '../../core/surfaces/a2a/create-a2a-api.js';
import '../../core/surfaces/mcp/create-mcp-api.js';
import '../../core/surfaces/queue/queue-port.js';
import '../../core/surfaces/slack/slack-bots-port.js';

interface Outcome {
  resourceId: string | null;
  replayed: boolean;
  answer?: unknown;
}

async function suite(kind: StoreKind) {
  const unavailable = kind === 'postgres' ? await postgresUnavailable() : null;
  describe(`inbox [${kind}]`, { skip: unavailable ?? false }, () => {
    let database: TestDatabase;
    let db: Db;
    let inbox: Inbox;
    let projectId: string;
    let made = 0;
    /** Resources whose work committed, in order. */
    let committed: string[] = [];

    before(async () => {
      database = await openTestDatabase(kind);
      db = database.db;
      await migrate(db);
      projectId = (await createProject(db, 'inbox')).id;
      inbox = createInbox(db, { retentionHours: 24 });
    });
    after(() => database.drop());

    const identity = (source: InboxSource, key: string, body: unknown = { input: 'x' }): InboxIdentity => ({
      projectId,
      source,
      key,
      operation: 'createThing',
      fingerprint: inbox.fingerprint('createThing', {}, body),
    });

    /** Work the way a core operation does it: reserve first, in the transaction that makes the resource. */
    const work = async (claim: IdempotencyClaim): Promise<Outcome> => {
      const resourceId = `thing_${++made}`;
      await db.transaction(async (tx) => {
        await reserveKey(tx, projectId, claim, resourceId);
        await sleep(30);
        await recordAnswer(tx, projectId, claim, 201, { id: resourceId }, resourceId);
      });
      committed.push(resourceId);
      return { resourceId, replayed: false };
    };
    const replay = async (record: InboxRecord): Promise<Outcome> => ({ resourceId: record.resourceId, replayed: true, answer: record.answer });
    const once = (id: InboxIdentity) => inbox.once(id, work, replay);
    const isConflictNaming = (term: string) => (error: unknown) =>
      error instanceof PalaiError && error.slug === 'idempotency-conflict' && error.message.includes(term);

    test('the same key under two sources is two requests, and both run', async () => {
      committed = [];
      const http = await once(identity('http', 'k-shared'));
      const a2a = await once(identity('a2a', 'k-shared'));
      assert.equal(http.replayed, false);
      assert.equal(a2a.replayed, false);
      assert.notEqual(http.resourceId, a2a.resourceId);
      assert.deepEqual(committed, [http.resourceId, a2a.resourceId]);
    });

    test('a repeat with the same source, key and request replays the first answer without running', async () => {
      committed = [];
      const first = await once(identity('queue', 'k-repeat'));
      const again = await once(identity('queue', 'k-repeat'));
      assert.deepEqual(again, { resourceId: first.resourceId, replayed: true, answer: { status: 201, body: { id: first.resourceId } } });
      assert.deepEqual(committed, [first.resourceId]);
    });

    test('two concurrent callers with one identity run the work once and both answer for it', async () => {
      committed = [];
      const startedBefore = made;
      // Both callers enter their work (both missed the record) before either reserves, however busy the machine.
      let arrived = 0;
      let bothIn: () => void = () => undefined;
      const barrier = new Promise<void>((resolve) => (bothIn = resolve));
      const racing = async (claim: IdempotencyClaim): Promise<Outcome> => {
        if (++arrived === 2) bothIn();
        await barrier;
        return work(claim);
      };
      const answers = await Promise.all([inbox.once(identity('slack', 'k-race'), racing, replay), inbox.once(identity('slack', 'k-race'), racing, replay)]);
      assert.equal(made - startedBefore, 2, 'both callers should have missed the record and raced to reserve');
      assert.equal(committed.length, 1);
      assert.deepEqual(
        answers.map((a) => a.resourceId),
        [committed[0], committed[0]],
      );
      assert.deepEqual(answers.map((a) => a.replayed).sort(), [false, true]);
    });

    test("the same key with a different request is an idempotency-conflict naming the source's key term", async () => {
      committed = [];
      await once(identity('http', 'k-conflict', { input: 'first' }));
      await once(identity('a2a', 'k-conflict', { input: 'first' }));
      await assert.rejects(once(identity('http', 'k-conflict', { input: 'second' })), isConflictNaming('Idempotency-Key "k-conflict"'));
      await assert.rejects(once(identity('a2a', 'k-conflict', { input: 'second' })), isConflictNaming('messageId "k-conflict"'));
      assert.equal(committed.length, 2);
    });

    test('a different request racing the first under one key is refused once the first commits', async () => {
      committed = [];
      const [first, second] = await Promise.allSettled([
        once(identity('mcp', 'k-race-conflict', { n: 1 })),
        once(identity('mcp', 'k-race-conflict', { n: 2 })),
      ]);
      assert.equal(committed.length, 1);
      const refused = [first, second].filter((r) => r.status === 'rejected');
      assert.equal(refused.length, 1);
      assert.ok(isConflictNaming('request id')((refused[0] as PromiseRejectedResult).reason));
    });

    test('an expired record counts as never seen: new work replaces it', async () => {
      committed = [];
      const first = await once(identity('http', 'k-expired'));
      await db.query("UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE project_id = $1 AND key = 'k-expired'", [projectId]);
      // Even a different request may use the key now.
      const second = await once(identity('http', 'k-expired', { input: 'other' }));
      assert.equal(second.replayed, false);
      assert.notEqual(second.resourceId, first.resourceId);
      const third = await once(identity('http', 'k-expired', { input: 'other' }));
      assert.deepEqual([third.replayed, third.resourceId], [true, second.resourceId]);
    });

    test('an empty key or one over 255 characters is a programming error, and nothing runs', async () => {
      committed = [];
      for (const key of ['', 'k'.repeat(256)]) {
        await assert.rejects(once(identity('queue', key)), RangeError);
      }
      await once(identity('queue', 'k'.repeat(255)));
      assert.equal(committed.length, 1);
    });

    test('the fingerprint tells requests apart but not the order of their keys', () => {
      assert.equal(inbox.fingerprint('op', { a: '1' }, { x: 1, y: 2 }), inbox.fingerprint('op', { a: '1' }, { y: 2, x: 1 }));
      assert.notEqual(inbox.fingerprint('op', { a: '1' }, { x: 1 }), inbox.fingerprint('op', { a: '2' }, { x: 1 }));
      assert.notEqual(inbox.fingerprint('op', {}, { x: 1 }), inbox.fingerprint('other', {}, { x: 1 }));
    });
  });

  describe(`inbox migration [${kind}]`, { skip: unavailable ?? false }, () => {
    let database: TestDatabase;
    before(async () => {
      database = await openTestDatabase(kind);
    });
    after(() => database.drop());

    test('keys stored before sources existed are kept as http keys and still replay', async () => {
      const { db } = database;
      await migrate(
        db,
        loadMigrations().filter((m) => m.version < 9),
      );
      const projectId = (await createProject(db, 'inbox-migration')).id;
      const inbox = createInbox(db, { retentionHours: 24 });
      const fingerprint = inbox.fingerprint('createAgent', {}, { name: 'old' });
      await db.query(
        `INSERT INTO idempotency_keys (project_id, key, operation, fingerprint, resource_id, status, body, expires_at)
         VALUES ($1, 'k-old', 'createAgent', $2, 'agt_old', 201, '{"id":"agt_old"}', now() + interval '1 hour')`,
        [projectId, fingerprint],
      );
      await migrate(db);
      const { rows } = await db.query<{ source: string }>("SELECT source FROM idempotency_keys WHERE key = 'k-old'");
      assert.deepEqual(rows, [{ source: 'http' }]);

      const ran: string[] = [];
      const identity = (source: InboxSource): InboxIdentity => ({ projectId, source, key: 'k-old', operation: 'createAgent', fingerprint });
      const work = async (claim: IdempotencyClaim) => {
        await db.transaction((tx) => reserveKey(tx, projectId, claim, `agt_${claim.source}`));
        ran.push(claim.source);
        return 'ran';
      };
      const replay = async (record: InboxRecord) => JSON.stringify(record.answer);
      assert.equal(await inbox.once(identity('http'), work, replay), JSON.stringify({ status: 201, body: { id: 'agt_old' } }));
      assert.equal(await inbox.once(identity('a2a'), work, replay), 'ran');
      assert.deepEqual(ran, ['a2a']);
    });
  });
}

for (const kind of storeKinds) await suite(kind);
