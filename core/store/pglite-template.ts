// A new embedded store starts as a copy of an initialized data directory:
// initdb's output, before any migration. initdb in WASM takes seconds and runs
// a second PostgreSQL instance that stays in the memory of the process that ran
// it (hundreds of MB), so it runs once, in a child process, and its output is
// kept beside the PGlite package (node_modules/.cache/palai/) for every later
// store; when that folder cannot be written, a private copy is made and dropped.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WASM_FLAGS } from './pglite-settings.js';

/** An initialized data directory and the same as a gzipped tar (what PGlite's `loadDataDir` takes). */
export interface StoreTemplate {
  dataDir: string;
  tarFile: string;
  /** Made for this process alone: remove it once used. */
  temporary: boolean;
}

// Run by `node --input-type=module -e`; argv: PGlite's module URL, the data directory, the tar file.
// The checkpoint makes the tar, taken from the running instance, a clean copy.
const INITDB_SCRIPT = `
const [pgliteUrl, dataDir, tarFile] = process.argv.slice(1);
const { PGlite } = await import(pgliteUrl);
const { writeFileSync } = await import('node:fs');
const pg = await PGlite.create(dataDir, { initDbStartParams: ['--no-sync'] });
await pg.exec('CHECKPOINT');
writeFileSync(tarFile, Buffer.from(await (await pg.dumpDataDir('gzip')).arrayBuffer()));
await pg.close();
`;

const PGLITE_URL = import.meta.resolve('@electric-sql/pglite');

/** node_modules/.cache/palai/pglite-<version>-<script hash>: a new PGlite or a new script makes a new template. */
function cachedTemplateDir(): string {
  const packageDir = join(dirname(fileURLToPath(PGLITE_URL)), '..');
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const script = createHash('sha256').update(INITDB_SCRIPT).digest('hex').slice(0, 8);
  return join(packageDir, '..', '..', '.cache', 'palai', `pglite-${version}-${script}`);
}

const parts = (dir: string) => ({ dataDir: join(dir, 'data'), tarFile: join(dir, 'data.tar.gz') });

const complete = (dir: string) => existsSync(join(parts(dir).dataDir, 'PG_VERSION')) && existsSync(parts(dir).tarFile);

/** Whether the cached template is there: without it, the next new store waits for initdb (a few seconds). */
export function templateReady(): boolean {
  return complete(cachedTemplateDir());
}

/** The cached template, made first if missing; a temporary one when the cache folder cannot be written. */
export async function storeTemplate(): Promise<StoreTemplate> {
  const cached = cachedTemplateDir();
  if (complete(cached)) return { ...parts(cached), temporary: false };
  let staging: string;
  try {
    mkdirSync(dirname(cached), { recursive: true });
    staging = mkdtempSync(`${cached}.making-`);
  } catch {
    staging = mkdtempSync(join(tmpdir(), 'palai-store-template-'));
  }
  try {
    await initdb(staging);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  try {
    renameSync(staging, cached);
    return { ...parts(cached), temporary: false };
  } catch {
    // Another process finished first (its template is as good as ours), or the cache cannot be written.
    if (!complete(cached)) return { ...parts(staging), temporary: true };
    rmSync(staging, { recursive: true, force: true });
    return { ...parts(cached), temporary: false };
  }
}

/** Runs initdb through PGlite in a child process, into `dir`/data and `dir`/data.tar.gz. */
function initdb(dir: string): Promise<void> {
  const { dataDir, tarFile } = parts(dir);
  return new Promise((resolve, reject) => {
    const args = [...WASM_FLAGS, '--input-type=module', '-e', INITDB_SCRIPT, PGLITE_URL, dataDir, tarFile];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`Initializing the embedded store failed (exit ${code}): ${stderr.trim()}`));
    });
  });
}
