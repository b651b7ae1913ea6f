// The embedded store: PGlite (PostgreSQL compiled to WASM) in this process, with
// its data under PALAI_HOME. One process at a time may open a data directory, so
// a lock file turns a second opener into a clear error instead of corruption.
import { PGlite } from '@electric-sql/pglite';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PalaiError } from '../errors/palai-error.js';
import type { Db, Queryable, QueryResult } from './db.js';

export class PgliteDb implements Db {
  readonly kind = 'pglite' as const;

  private constructor(private readonly pg: PGlite, private readonly lockFile: string | null) {}

  /** Opens (creating if needed) the store in `dataDir`, or an in-memory one when null. */
  static async open(dataDir: string | null): Promise<PgliteDb> {
    let lockFile: string | null = null;
    if (dataDir) {
      mkdirSync(dataDir, { recursive: true });
      lockFile = join(dataDir, '..', 'palai-db.lock');
      takeLock(lockFile);
    }
    try {
      const pg = await PGlite.create(dataDir ?? undefined);
      return new PgliteDb(pg, lockFile);
    } catch (error) {
      if (lockFile) rmSync(lockFile, { force: true });
      throw error;
    }
  }

  async query<Row>(sql: string, params: unknown[] = []): Promise<QueryResult<Row>> {
    const result = await this.pg.query<Row>(sql, params);
    return { rows: result.rows, rowCount: Math.max(result.affectedRows ?? 0, result.rows.length) };
  }

  async exec(sql: string): Promise<void> {
    await this.pg.exec(sql);
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.pg.transaction(async (t) =>
      work({
        query: async <Row>(sql: string, params: unknown[] = []) => {
          const result = await t.query<Row>(sql, params);
          return { rows: result.rows, rowCount: Math.max(result.affectedRows ?? 0, result.rows.length) };
        },
        exec: async (sql: string) => {
          await t.exec(sql);
        },
      }),
    );
  }

  async listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>> {
    return this.pg.listen(channel, onMessage);
  }

  async close(): Promise<void> {
    await this.pg.close();
    if (this.lockFile) rmSync(this.lockFile, { force: true });
  }
}

function takeLock(lockFile: string): void {
  try {
    writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
    return;
  } catch {
    const holder = Number(readFileSync(lockFile, 'utf8'));
    if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
      throw new PalaiError(
        'store-busy',
        `The embedded store is open in process ${holder} (lock ${lockFile}). Stop that process, or set PALAI_DATABASE_URL to share a PostgreSQL database between processes.`,
      );
    }
    // A stale lock from a process that died: take it over.
    writeFileSync(lockFile, String(process.pid));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
