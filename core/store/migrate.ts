// Numbered, forward-only SQL migrations, applied in one transaction under an
// advisory lock so several processes starting at once apply each exactly once.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db, Queryable } from './db.js';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
// Any constant works; it only has to be the same in every Palai process.
const MIGRATION_LOCK_KEY = 7_311_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(join(dir, file), 'utf8'),
    }));
}

async function ensureLedger(tx: Queryable): Promise<void> {
  await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
}

/** Applies every pending migration; returns the versions it applied. */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await ensureLedger(tx);
    const done = new Set((await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      applied.push(migration.version);
    }
    return applied;
  });
}

export interface MigrationStatus {
  applied: number;
  pending: Migration[];
}

export async function migrationStatus(db: Db, migrations = loadMigrations()): Promise<MigrationStatus> {
  const ledger = await db.query<{ exists: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS exists");
  const done = ledger.rows[0]?.exists
    ? new Set((await db.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version))
    : new Set<number>();
  return { applied: done.size, pending: migrations.filter((m) => !done.has(m.version)) };
}
