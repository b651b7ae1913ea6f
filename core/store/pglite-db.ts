// The embedded store: PGlite (PostgreSQL compiled to WASM) in this process, with
// its data under PALAI_HOME. One process at a time may open a data directory, so
// a lock file turns a second opener into a clear error instead of corruption.
// A new store is copied from an initialized template (pglite-template.ts), so
// this process never runs initdb.
import { PGlite } from '@electric-sql/pglite';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PalaiError } from '../errors/palai-error.js';
import type { Db, Queryable, QueryResult } from './db.js';
import { START_PARAMS, useWasmFlags } from './pglite-settings.js';
import { storeTemplate, type StoreTemplate } from './pglite-template.js';

export class PgliteDb implements Db {
  readonly kind = 'pglite' as const;

  private constructor(
    private readonly pg: PGlite,
    private readonly lockFile: string | null,
  ) {}

  /** Opens (creating if needed) the store in `dataDir`, or an in-memory one when null. */
  static async open(dataDir: string | null): Promise<PgliteDb> {
    let lockFile: string | null = null;
    if (dataDir) {
      mkdirSync(dirname(dataDir), { recursive: true });
      lockFile = join(dataDir, '..', 'palai-db.lock');
      takeLock(lockFile);
    }
    try {
      useWasmFlags();
      const pg = dataDir ? await openDataDir(dataDir) : await openInMemory();
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

async function openDataDir(dataDir: string): Promise<PGlite> {
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await createDataDir(dataDir);
  return PGlite.create(dataDir, { startParams: START_PARAMS });
}

function openInMemory(): Promise<PGlite> {
  return withTemplate((template) => PGlite.create({ loadDataDir: new Blob([readFileSync(template.tarFile)]), startParams: START_PARAMS }));
}

/** Copies the template beside `dataDir`, then renames it in: a start cut off midway leaves no half-made store. */
async function createDataDir(dataDir: string): Promise<void> {
  if (existsSync(dataDir)) {
    if (readdirSync(dataDir).length > 0) {
      throw new Error(`${dataDir} holds files but no embedded store (no PG_VERSION). Move it away, or point PALAI_HOME elsewhere.`);
    }
    rmSync(dataDir, { recursive: true });
  }
  // The lock is held: a copy already here is from a start that was cut off.
  const staging = `${dataDir}.new`;
  rmSync(staging, { recursive: true, force: true });
  await withTemplate(async (template) => cpSync(template.dataDir, staging, { recursive: true }));
  renameSync(staging, dataDir);
}

async function withTemplate<T>(use: (template: StoreTemplate) => Promise<T>): Promise<T> {
  const template = await storeTemplate();
  try {
    return await use(template);
  } finally {
    if (template.temporary) rmSync(dirname(template.dataDir), { recursive: true, force: true });
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
