// The store matrix: the same suites run against embedded PGlite and a real
// PostgreSQL (a fresh database per test file), chosen by PALAI_TEST_STORES.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Db, StoreKind } from '../../core/store/db.js';
import { PgDb } from '../../core/store/pg-db.js';
import { PgliteDb } from '../../core/store/pglite-db.js';

export const ADMIN_URL = process.env.PALAI_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const requireServices = process.env.PALAI_REQUIRE_SERVICES === '1';

export const storeKinds: StoreKind[] = (process.env.PALAI_TEST_STORES ?? 'pglite,postgres')
  .split(',')
  .map((s) => s.trim())
  .filter((s): s is StoreKind => s === 'pglite' || s === 'postgres');

let postgresProbe: Promise<string | null> | null = null;

/** Null when PostgreSQL answers; otherwise why not (fatal under PALAI_REQUIRE_SERVICES=1). */
export function postgresUnavailable(): Promise<string | null> {
  postgresProbe ??= (async () => {
    const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return null;
    } catch (error) {
      const reason = `PostgreSQL at ${ADMIN_URL} is unreachable: ${(error as Error).message}`;
      if (requireServices) throw new Error(`${reason} (PALAI_REQUIRE_SERVICES=1)`);
      return reason;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return postgresProbe;
}

export interface TestDatabase {
  db: Db;
  /** Connection URL, for spawned processes (postgres only). */
  url: string | null;
  drop(): Promise<void>;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh, empty PostgreSQL database; dropped by `drop`. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `palai_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export async function openTestDatabase(kind: StoreKind): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const db = await PgliteDb.open(null);
    return { db, url: null, drop: () => db.close() };
  }
  const fresh = await freshPostgresDatabase();
  const db = new PgDb(fresh.url, 5);
  return {
    db,
    url: fresh.url,
    async drop() {
      await db.close();
      await fresh.drop();
    },
  };
}
