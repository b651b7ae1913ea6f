// Named prepared statements on PostgreSQL: a statement is parsed once per
// connection and reused, none is named when the setting is off, and a
// migration that adds a column (a rolling upgrade: old processes keep their
// prepared statements) breaks no statement Palai names.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PgDb } from '../../core/store/pg-db.js';
import { freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';

const postgresReason = await postgresUnavailable();

/** The prepared statements of the connection a one-connection pool hands out, by their text. */
async function prepared(db: PgDb, text: string): Promise<Array<{ name: string; calls: number }>> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ name: string; calls: number }>(
      'SELECT name, (generic_plans + custom_plans)::integer AS calls FROM pg_prepared_statements WHERE statement = $1 AND NOT from_sql',
      [text],
    );
    return rows;
  });
}

describe('prepared statements on PostgreSQL', { skip: postgresReason ?? false }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  before(async () => {
    database = await freshPostgresDatabase();
  });
  after(async () => {
    await database?.drop();
  });

  test('a statement sent again is parsed once on its connection and its plan reused, inside transactions and out', async () => {
    const db = new PgDb(database.url, 1);
    try {
      const sql = 'SELECT $1::integer + 1 AS n';
      for (let i = 0; i < 7; i++) assert.deepEqual((await db.query<{ n: number }>(sql, [i])).rows, [{ n: i + 1 }]);
      await db.transaction(async (tx) => {
        assert.deepEqual((await tx.query<{ n: number }>(sql, [41])).rows, [{ n: 42 }]);
      });
      const statements = await prepared(db, sql);
      assert.equal(statements.length, 1);
      assert.match(statements[0].name, /^palai_/);
      assert.equal(statements[0].calls, 8);
    } finally {
      await db.close();
    }
  });

  test('with prepared statements off nothing is named', async () => {
    const db = new PgDb(database.url, 1, { preparedStatements: false });
    try {
      const sql = 'SELECT $1::integer + 2 AS n';
      for (let i = 0; i < 3; i++) assert.deepEqual((await db.query<{ n: number }>(sql, [i])).rows, [{ n: i + 2 }]);
      assert.deepEqual(await prepared(db, sql), []);
    } finally {
      await db.close();
    }
  });

  test('a column added by a newer release breaks none of the statements named before it', async () => {
    const db = new PgDb(database.url, 1);
    try {
      await db.exec('CREATE TABLE upgrade_probe (id integer PRIMARY KEY, name text)');
      await db.query('INSERT INTO upgrade_probe VALUES ($1, $2)', [1, 'one']);
      const listed = 'SELECT id, name FROM upgrade_probe WHERE id = $1';
      const starred = 'SELECT * FROM upgrade_probe WHERE id = $1';
      for (let i = 0; i < 6; i++) {
        await db.query(listed, [1]);
        await db.query(starred, [1]);
      }
      await db.exec('ALTER TABLE upgrade_probe ADD COLUMN added text');
      assert.deepEqual((await db.query(listed, [1])).rows, [{ id: 1, name: 'one' }]);
      // Named, this one would now fail with "cached plan must not change result type".
      assert.deepEqual((await db.query(starred, [1])).rows, [{ id: 1, name: 'one', added: null }]);
      assert.deepEqual(await prepared(db, starred), []);
    } finally {
      await db.close();
    }
  });
});
