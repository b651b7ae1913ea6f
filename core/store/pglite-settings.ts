// How the embedded store's PostgreSQL runs: settings sized for one process's
// small store rather than initdb's server-sized ones, and how V8 compiles its WASM.
import { PGlite } from '@electric-sql/pglite';
import v8 from 'node:v8';

/**
 * Over initdb's, which size a server: PGlite touches all of shared_buffers when
 * it starts (128MB by initdb), while a single process's store needs little, and
 * pages beyond it are read back from the files. maintenance_work_mem bounds what
 * a migration's index build leaves in the WASM heap, which never shrinks.
 */
const SETTINGS = ['shared_buffers=16MB', 'maintenance_work_mem=16MB'];

export const START_PARAMS = [...PGlite.defaultStartParams, ...SETTINGS.flatMap((setting) => ['-c', setting])];

/**
 * PostgreSQL's WASM code runs as V8's baseline compiler (Liftoff) made it. V8
 * would otherwise recompile its hot functions with TurboFan: seconds of CPU at
 * start (a new store's migrations take three times as long) and some 60 MB that
 * stay, for 10–20% per statement that a single-process store can spare.
 */
export const WASM_FLAGS = ['--liftoff-only'];

/** Applies WASM_FLAGS to this process, before PGlite compiles its module. Process-wide: WebAssembly compiled later (undici's HTTP parser) gets them too. */
export function useWasmFlags(): void {
  for (const flag of WASM_FLAGS) v8.setFlagsFromString(flag);
}
