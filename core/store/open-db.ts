import { join } from 'node:path';
import type { PalaiConfig } from '../config.js';
import type { Db } from './db.js';
import { PgDb } from './pg-db.js';
import { PgliteDb } from './pglite-db.js';

/** PostgreSQL when a URL is configured, otherwise the embedded store under PALAI_HOME. */
export async function openDb(config: Pick<PalaiConfig, 'databaseUrl' | 'home'>): Promise<Db> {
  if (config.databaseUrl) return new PgDb(config.databaseUrl);
  return PgliteDb.open(join(config.home, 'db'));
}
