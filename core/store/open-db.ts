import { join } from 'node:path';
import type { PalaiConfig } from '../config.js';
import type { Db } from './db.js';

/**
 * PostgreSQL when a URL is configured, otherwise the embedded store under PALAI_HOME.
 * Each driver is loaded only when chosen: a process never holds both.
 */
export async function openDb(config: Pick<PalaiConfig, 'databaseUrl' | 'home'> & Partial<Pick<PalaiConfig, 'databasePreparedStatements'>>): Promise<Db> {
  if (config.databaseUrl) {
    const { PgDb } = await import('./pg-db.js');
    return new PgDb(config.databaseUrl, undefined, { preparedStatements: config.databasePreparedStatements ?? true });
  }
  const { PgliteDb } = await import('./pglite-db.js');
  return PgliteDb.open(join(config.home, 'db'));
}
