#!/usr/bin/env node
// `npm test`: every tests/**/*.test.ts through Node's own runner (TypeScript via
// tsx). The files are listed here (in a stable order), not globbed by the runner.
// The store matrix is PALAI_TEST_STORES (default "pglite,postgres").
// dist/ is brought up to date first: the tests that spawn `palai` run the
// compiled CLI, which must be the code under test, never an older build; and
// so is console/dist, which the console's browser tests load.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

function findTests(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === 'fixtures' || name === 'support' ? [] : findTests(path);
      return name.endsWith('.test.ts') ? [relative(root, path)] : [];
    });
}

const filters = process.argv.slice(2);
const files = findTests(join(root, 'tests')).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
for (const script of ['scripts/build.mjs', 'scripts/build-console.mjs']) {
  const build = spawnSync(process.execPath, [script, '--quiet'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// --test-force-exit: a file whose tests all ended exits, even if Node's own teardown would not
// (it has been seen spinning in its handle cleanup at exit, nodejs/node#47748, holding the run for good).
const args = ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-force-exit', '--test-reporter=spec', ...files];
// PALAI_JOURNAL_VERIFY: every journal append is read back and compared (core/journal/journal.ts).
const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: { PALAI_JOURNAL_VERIFY: '1', ...process.env } });
process.exit(result.status ?? 1);
