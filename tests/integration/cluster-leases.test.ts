// Cluster leases by key, as a specification: one live holder at a time across
// processes (two connection pools on PostgreSQL), a fencing token that grows at
// every take, renew and release refused once the key moved on, expiry read by
// the store's clock, and a fenced write that a takeover has to wait for.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHub, type Hub } from '../../cli/hub.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { holdsLease, releaseLease, renewLease, takeLease } from '../../core/leases/leases.js';
import { createLogger } from '../../core/logger.js';
import type { Db } from '../../core/store/db.js';
import { migrate } from '../../core/store/migrate.js';
import { PgDb } from '../../core/store/pg-db.js';
import { testConfig } from '../support/hub.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';
import { until, untilStorePasses } from '../support/until.js';

const LONG = 60_000;
let keys = 0;
const freshKey = () => `test.lease:${process.pid}-${++keys}`;
const isValidationError = (pointer: string) => (error: unknown) =>
  error instanceof PalaiError && error.slug === 'validation-failed' && error.errors?.[0]?.pointer === pointer;

for (const kind of storeKinds) {
  describe(`cluster leases [${kind}]`, { skip: kind === 'postgres' ? ((await postgresUnavailable()) ?? false) : false }, () => {
    let database: TestDatabase;
    /** "Process" A and "process" B: two pools on PostgreSQL; the one embedded store serves both otherwise. */
    let a: Db;
    let b: Db;
    before(async () => {
      database = await openTestDatabase(kind);
      a = database.db;
      await migrate(a);
      b = database.url ? new PgDb(database.url, 2) : a;
    });
    after(async () => {
      if (b !== a) await b.close();
      await database?.drop();
    });

    test('a take gives the first token; while it is live another holder is refused', async () => {
      const key = freshKey();
      const first = await takeLease(a, key, 'holder-a', LONG);
      assert.ok(first);
      assert.equal(first.token, 1);
      assert.equal(first.holder, 'holder-a');
      assert.ok(first.expiresAt instanceof Date);
      assert.equal(await takeLease(b, key, 'holder-b', LONG), null);
    });

    test('every take of a key gets a greater token: the holder again, a takeover after expiry, a take after release', async () => {
      const key = freshKey();
      const first = (await takeLease(a, key, 'holder-a', 200))!;
      const again = (await takeLease(a, key, 'holder-a', 200))!;
      assert.ok(again.token > first.token, 'the holder taking again begins a new tenure');
      assert.equal(await holdsLease(a, first), false, 'the old tenure is no longer current');
      await untilStorePasses(a, again.expiresAt, 'the lease expires by the store clock');
      const takeover = (await takeLease(b, key, 'holder-b', LONG))!;
      assert.ok(takeover.token > again.token);
      assert.equal(takeover.holder, 'holder-b');
      assert.equal(await releaseLease(b, takeover), true);
      const later = (await takeLease(a, key, 'holder-a', LONG))!;
      assert.ok(later.token > takeover.token, 'a released key keeps its count');
    });

    test('renew and release need the current token: after a takeover both are refused and change nothing', async () => {
      const key = freshKey();
      const mine = (await takeLease(a, key, 'holder-a', 200))!;
      const renewed = (await renewLease(a, mine, 200))!;
      assert.equal(renewed.token, mine.token, 'a renew keeps the tenure');
      assert.ok(renewed.expiresAt.getTime() >= mine.expiresAt.getTime());
      await untilStorePasses(a, renewed.expiresAt, 'the lease expires by the store clock');
      const theirs = (await takeLease(b, key, 'holder-b', LONG))!;
      assert.equal(await renewLease(a, mine, LONG), null);
      assert.equal(await releaseLease(a, mine), false);
      assert.equal(await takeLease(a, key, 'holder-a', LONG), null, 'the other holder still holds it');
      assert.equal(await holdsLease(b, theirs), true);
    });

    test('a lease that expired but nobody took is renewed; its writes were fenced out meanwhile', async () => {
      const key = freshKey();
      const mine = (await takeLease(a, key, 'holder-a', 100))!;
      await untilStorePasses(a, mine.expiresAt, 'the lease expires by the store clock');
      assert.equal(await a.transaction((tx) => holdsLease(tx, mine)), false, 'an expired tenure fences its writes');
      const renewed = (await renewLease(a, mine, LONG))!;
      assert.equal(renewed.token, mine.token);
      assert.equal(await a.transaction((tx) => holdsLease(tx, mine)), true);
    });

    test('a released tenure is over: its writes are fenced, and anyone takes the key at once', async () => {
      const key = freshKey();
      const mine = (await takeLease(a, key, 'holder-a', LONG))!;
      assert.equal(await releaseLease(a, mine), true);
      assert.equal(await releaseLease(a, mine), false, 'released once');
      assert.equal(await renewLease(a, mine, LONG), null);
      assert.equal(await a.transaction((tx) => holdsLease(tx, mine)), false);
      assert.ok(await takeLease(b, key, 'holder-b', LONG));
    });

    test('a new tenure waits for the transaction of a fenced write, so the write lands inside the old one', async () => {
      const key = freshKey();
      const mine = (await takeLease(a, key, 'holder-a', LONG))!;
      const order: string[] = [];
      let retake: Promise<unknown> | null = null;
      await a.transaction(async (tx) => {
        assert.equal(await holdsLease(tx, mine), true);
        // The holder, restarted elsewhere, takes the key again: a new tenure, and the old token stops being current.
        retake = takeLease(b, key, 'holder-a', LONG).then((grant) => order.push(grant ? `tenure ${grant.token}` : 'refused'));
        // On PostgreSQL the take reaches the row and waits on the write's lock; the embedded store runs one transaction at a time.
        if (b !== a) {
          await until(
            'the take waits on the lease row',
            async () =>
              (
                await a.query<{ n: number }>(
                  `SELECT count(*)::integer AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%cluster_leases%'`,
                )
              ).rows[0].n > 0,
          );
        }
        order.push('write committed');
      });
      await retake;
      assert.deepEqual(order, ['write committed', `tenure ${mine.token + 1}`]);
      assert.equal(await a.transaction((tx) => holdsLease(tx, mine)), false);
    });

    test('bad keys, holders and times to live are refused before anything is written', async () => {
      await assert.rejects(takeLease(a, '', 'h', LONG), isValidationError('/key'));
      await assert.rejects(takeLease(a, 'has space', 'h', LONG), isValidationError('/key'));
      await assert.rejects(takeLease(a, 'x'.repeat(201), 'h', LONG), isValidationError('/key'));
      await assert.rejects(takeLease(a, freshKey(), '', LONG), isValidationError('/holder'));
      await assert.rejects(takeLease(a, freshKey(), 'h', 0), isValidationError('/ttl_ms'));
      await assert.rejects(takeLease(a, freshKey(), 'h', 1.5), isValidationError('/ttl_ms'));
      await assert.rejects(renewLease(a, { key: freshKey(), token: 0 }, LONG), isValidationError('/token'));
    });
  });

  describe(`cluster leases through the kernel API [${kind}]`, { skip: kind === 'postgres' ? ((await postgresUnavailable()) ?? false) : false }, () => {
    let database: TestDatabase;
    let hub: Hub;
    before(async () => {
      database = await openTestDatabase(kind);
      hub = await startHub({ config: testConfig(), db: database.db, logger: createLogger('silent'), role: 'api' });
    });
    after(async () => {
      await hub?.close();
      await database?.drop();
    });

    test('take, renew and release; a bad key is validation-failed', async () => {
      const key = freshKey();
      const grant = (await hub.api.leases.take(key, 'api-holder', LONG))!;
      assert.equal(grant.key, key);
      assert.equal((await hub.api.leases.renew(grant, LONG))?.token, grant.token);
      assert.equal(await hub.api.leases.take(key, 'someone-else', LONG), null);
      assert.equal(await hub.api.leases.release(grant), true);
      assert.ok(await hub.api.leases.take(key, 'someone-else', LONG));
      await assert.rejects(hub.api.leases.take('bad key', 'h', LONG), isValidationError('/key'));
    });
  });
}
