#!/usr/bin/env node
// `npm run build:console`: the web console (console/, Preact with Vite) into
// console/dist, which the hub serves at /console. Run by `prepare` (so `npm ci`
// builds it) and before the tests. Skipped when no source changed since the
// last build: the paths, sizes and modification times of console/ and sdk/src/
// (the console bundles the SDK), kept in console/dist/.sources.
//
//   node scripts/build-console.mjs [--quiet]
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'console', 'dist');
const STAMP = join(OUT, '.sources');
const quiet = process.argv.includes('--quiet');

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'dist' || entry.name === 'node_modules') return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

function sources() {
  return [...filesUnder(join(ROOT, 'console')), ...filesUnder(join(ROOT, 'sdk', 'src'))]
    .sort()
    .map((path) => {
      const stat = statSync(path);
      return `${relative(ROOT, path)} ${stat.size} ${stat.mtimeMs}`;
    })
    .join('\n');
}

if (!existsSync(join(ROOT, 'console', 'index.html'))) {
  console.error('console/index.html is missing: nothing to build the console from');
  process.exit(1);
}
const stamp = sources();
if (existsSync(join(OUT, 'index.html')) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === stamp) {
  if (!quiet) console.log('console/dist is up to date');
  process.exit(0);
}
const { build } = await import('vite');
const started = Date.now();
await build({ configFile: join(ROOT, 'console', 'vite.config.ts'), logLevel: 'warn' });
writeFileSync(STAMP, stamp);
if (!quiet) console.log(`built the console into console/dist in ${Date.now() - started} ms`);
