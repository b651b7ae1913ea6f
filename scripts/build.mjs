#!/usr/bin/env node
// `npm run build`: compiles what a Palai process runs (core/, adapters/, bots/,
// cli/, generated/) to dist/, one JavaScript file and source map per TypeScript
// file in the same layout, and copies the files read at runtime beside them (the
// SQL migrations, generated/openapi.json, the generated validators). Type
// checking is `npm run typecheck`'s job; esbuild only strips the types, as tsx does.
//
// Incremental and safe to run while dist/ is in use: a file is written (to a
// temporary name, then renamed) only when its content changes, and a file with
// no source any more is deleted, so dist/ always mirrors the sources exactly.
// When no source was added, removed or touched since the last build (their
// paths, sizes and modification times, in dist/.sources), it stops before
// compiling anything: `npm start` pays a few milliseconds for the check.
//
//   node scripts/build.mjs [--quiet]     (--quiet: say nothing when nothing changed)
//
// scripts/run.mjs imports it, so `npm start` checks and starts in one process.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const SOURCE_DIRS = ['core', 'adapters', 'bots', 'cli', 'generated'];
/** Files a process reads or imports as they are. */
const COPIED = /\.(sql|json|js)$/;
/** What the last build was made from. */
const STAMP = join(DIST, '.sources');

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

/** Writes `content` to `path` unless it is there already; a reader never sees a half-written file. */
function writeIfChanged(path, content) {
  try {
    if (readFileSync(path).equals(content)) return false;
  } catch {
    // Not there yet.
  }
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, content);
  renameSync(temporary, path);
  return true;
}

/** Deletes what no source produces any more (a removed or renamed module must not stay importable). */
function removeOrphans(expected) {
  let removed = 0;
  const sweep = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) sweep(path);
      else if (!expected.has(path) && !path.endsWith('.tmp')) {
        rmSync(path, { force: true });
        removed += 1;
      }
    }
  };
  sweep(DIST);
  return removed;
}

/** The sources (and this script) as paths, sizes and modification times: changes whenever one is added, removed or written. */
function sourcesDigest(sources) {
  const hash = createHash('sha256');
  for (const path of [fileURLToPath(import.meta.url), ...sources]) {
    const { size, mtimeMs } = statSync(path);
    hash.update(`${relative(ROOT, path)}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/**
 * Brings dist/ up to date with the sources; says how many files it wrote and
 * removed. `starting(fresh)` is called before anything is compiled (`fresh`: there is no build yet).
 */
export async function buildDist(starting = () => {}) {
  const sources = SOURCE_DIRS.flatMap((dir) => filesUnder(join(ROOT, dir))).sort();
  const digest = sourcesDigest(sources);
  const built = existsSync(join(DIST, 'cli', 'main.js'));
  const current = built && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === digest;
  if (current) return { files: null, written: 0, removed: 0 };
  starting(!built);
  const { build, stop } = await import('esbuild');
  try {
    return await compile(sources, digest, build);
  } finally {
    await stop();
  }
}

async function compile(sources, digest, build) {
  const compiled = sources.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'));
  const { outputFiles } = await build({
    entryPoints: compiled,
    outbase: ROOT,
    outdir: DIST,
    write: false,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    sourcemap: 'linked',
    // The maps point at the sources in the repository; their text need not be copied too.
    sourcesContent: false,
    logLevel: 'warning',
  });
  const outputs = new Map(outputFiles.map((file) => [file.path, Buffer.from(file.contents)]));
  for (const path of sources.filter((path) => COPIED.test(path))) outputs.set(join(DIST, relative(ROOT, path)), readFileSync(path));
  mkdirSync(DIST, { recursive: true });
  let written = 0;
  for (const [path, content] of outputs) if (writeIfChanged(path, content)) written += 1;
  const removed = removeOrphans(new Set([...outputs.keys(), STAMP]));
  writeIfChanged(STAMP, Buffer.from(digest));
  return { files: outputs.size, written, removed };
}

/**
 * Builds, and says what it does on stderr: before compiling (when `quiet`, only
 * a first build, which takes seconds), and what it wrote (when `quiet`, only if
 * it wrote or removed anything).
 */
export async function buildAndReport(quiet) {
  const started = performance.now();
  const announce = (fresh) => {
    if (!quiet || fresh) console.error(`Building dist/ from ${SOURCE_DIRS.map((dir) => `${dir}/`).join(', ')} …`);
  };
  const { files, written, removed } = await buildDist(announce);
  if (!quiet || written + removed > 0) {
    const ms = Math.round(performance.now() - started);
    console.error(files === null ? `dist/ is up to date (${ms} ms)` : `dist/: ${files} files, ${written} written, ${removed} removed (${ms} ms)`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await buildAndReport(process.argv.includes('--quiet'));
