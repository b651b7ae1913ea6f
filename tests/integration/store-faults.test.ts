// The PostgreSQL store under connection faults: a client checked out for a
// transaction whose connection is reset (or whose backend is terminated by an
// administrator) between two statements must fail that transaction with an
// error the kernel recognises as an outage — never raise an unhandled 'error'
// event that kills the process — and the pool must serve the next caller.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { PgDb } from '../../core/store/pg-db.js';
import { isTransientStoreError } from '../../core/store/transient.js';
import { ADMIN_URL, freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const postgresReason = await postgresUnavailable();

/** Resolves `open()`; until then the transaction sits idle between two statements. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe('PostgreSQL store under connection faults', { skip: postgresReason ?? false }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let proxy: TcpProxy;
  let db: PgDb;

  before(async () => {
    database = await freshPostgresDatabase();
    const target = new URL(ADMIN_URL);
    proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    db = new PgDb(proxy.urlFor(database.url), 2);
  });

  after(async () => {
    await db?.close();
    await proxy?.close();
    await database?.drop();
  });

  test('a reset between two statements of a transaction fails it as an outage and the pool recovers', async () => {
    const between = gate();
    const started = gate();
    const transaction = db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      started.open();
      await between.wait;
      await tx.query('SELECT 2');
    });
    transaction.catch(() => undefined);
    await started.wait;
    assert.ok(proxy.resetAll() > 0, 'the reset cut the checked-out connection');
    // The socket error reaches the idle client now; unhandled, it would end the process here.
    await sleep(200);
    between.open();
    await assert.rejects(transaction, (error: unknown) => {
      assert.ok(isTransientStoreError(error), `an outage, not a bug: ${String(error)}`);
      return true;
    });
    const { rows } = await db.query<{ ok: number }>('SELECT 1 AS ok');
    assert.deepEqual(rows, [{ ok: 1 }], 'the next query gets a working connection');
    await db.transaction(async (tx) => tx.query('SELECT 1'));
  });

  test('a backend terminated by an administrator between two statements fails the transaction as an outage', async () => {
    const between = gate();
    let pid = 0;
    const transaction = db.transaction(async (tx) => {
      pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      await between.wait;
      await tx.query('SELECT 2');
    });
    transaction.catch(() => undefined);
    await sleep(100);
    assert.ok(pid > 0);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ done: boolean }>('SELECT pg_terminate_backend($1) AS done', [pid]);
      assert.equal(rows[0].done, true);
    } finally {
      await admin.end();
    }
    await sleep(200);
    between.open();
    await assert.rejects(transaction, (error: unknown) => isTransientStoreError(error));
    assert.equal((await db.query<{ ok: number }>('SELECT 1 AS ok')).rows[0].ok, 1);
  });

  test("a connection handed to a waiting transaction in the same read as its backend's termination", async () => {
    // One connection: the transaction waits for the query's. The query's answer
    // and the FATAL of the terminated backend arrive in one read, so the pool
    // hands the connection over and the FATAL follows before the transaction
    // has run a line: unhandled, that 'error' event would end this process.
    const single = new PgDb(proxy.urlFor(database.url), 1);
    try {
      const pid = (await single.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      proxy.holdReplies();
      const query = single.query('SELECT 1');
      const transaction = single.transaction(async (tx) => tx.query('SELECT 2'));
      transaction.catch(() => undefined);
      await sleep(100);
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      try {
        assert.equal((await admin.query<{ done: boolean }>('SELECT pg_terminate_backend($1) AS done', [pid])).rows[0].done, true);
      } finally {
        await admin.end();
      }
      await sleep(100);
      proxy.releaseReplies();
      assert.deepEqual((await query).rows, [{ '?column?': 1 }], 'the query had its answer before the FATAL');
      await assert.rejects(transaction, (error: unknown) => {
        assert.ok(isTransientStoreError(error), `an outage, not a bug: ${String(error)}`);
        return true;
      });
      assert.equal((await single.query<{ ok: number }>('SELECT 1 AS ok')).rows[0].ok, 1, 'the pool serves the next caller');
    } finally {
      proxy.releaseReplies();
      await single.close();
    }
  });
});
