// Each bench runs once on the embedded store (in memory) and once on PostgreSQL
// when PALAI_BENCH_DATABASE_URL names a scratch database.
import type { Db } from '../core/store/db.js';
import { PgDb } from '../core/store/pg-db.js';
import { PgliteDb } from '../core/store/pglite-db.js';

export async function onEachStore(run: (store: string, db: Db) => Promise<void>): Promise<void> {
  const pglite = await PgliteDb.open(null);
  await run('embedded PGlite (in memory)', pglite);
  await pglite.close();
  if (!process.env.PALAI_BENCH_DATABASE_URL) return;
  const pg = new PgDb(process.env.PALAI_BENCH_DATABASE_URL);
  await run('PostgreSQL', pg);
  await pg.close();
}
