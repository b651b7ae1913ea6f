#!/usr/bin/env node
// The `palai` command: the compiled CLI in dist/, which `npm run build` writes
// (`npm install` runs it through the prepare script). Source maps are written
// but not loaded by default, since they cost start-up time and memory;
// NODE_OPTIONS=--enable-source-maps makes stack traces name the TypeScript lines.
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('palai: dist/ is missing; build it with npm run build.\n');
  process.exit(1);
}
await import(main.href);
