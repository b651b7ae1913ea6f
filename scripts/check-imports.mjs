#!/usr/bin/env node
// The dependency rule of ARCHITECTURE.md §1, checked rather than hoped for:
// arrows point inward (cli → adapters, bots → core → generated), a surface
// sees only the kernel's public face, and surface libraries stay out of core.
// Plain Node, no dependencies, so it runs before `npm ci` and in any hook.
//
//   node scripts/check-imports.mjs [--json] [root]
//
// Prints each violation as `file:line imports target — rule`; exits 1 if any.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCANNED = ['core', 'adapters', 'bots'];

/** Libraries of a surface, a provider or a transport: never in core. */
const SURFACE_LIBRARIES = [/^express$/, /^@slack\//, /^kafkajs$/, /^@aws-sdk\//, /^openai$/, /^@anthropic-ai\/sdk$/];
/** Database drivers: only the store may hold them. */
const STORE_LIBRARIES = [/^pg$/, /^@electric-sql\/pglite$/];
/** Cron libraries: one module reads cron expressions, so every schedule means the same thing. */
const CRON_LIBRARIES = [/^croner$/, /^cron$/, /^cron-parser$/, /^node-cron$/, /^node-schedule$/];
const CRON_MODULE = 'core/surfaces/autonomy/cron.ts';

const RULES = {
  coreInward: 'core never imports adapters/, bots/ or cli/',
  coreLibrary: 'core imports no surface library (express, Slack, Kafka, AWS, model SDKs)',
  cronLibrary: `a cron library (croner) is imported only by ${CRON_MODULE}`,
  storeDriver: 'database drivers (pg, PGlite) are imported only inside core/store/',
  dbHandle: 'a surface never imports the Db handle (core/store/db.ts)',
  kernelApi: 'a surface imports from core only core/api/**, *-port.ts, core/errors/**, core/ids.ts, core/config.ts, core/logger.ts, core/response-status.ts',
  otherSurface: 'a surface never imports another surface folder (adapters/models/shared is for model adapters only)',
  cli: 'only cli/ is the composition root: nothing in core/, adapters/ or bots/ imports it',
  kernelWing: 'no kernel folder imports core/surfaces/** (a wing builds on the kernel, never the other way)',
  otherWing: 'a wing never imports another wing (core/surfaces/<name>/ stands alone beside the kernel)',
  ownWing: "a surface imports only its own wing's API and port files (core/surfaces/<its name>/<name>-api.ts, *-port.ts) and its wire modules (wire/**)",
  companion: 'the companion (adapters/nodes/companion/) never imports the hub: only itself, core/surfaces/nodes/wire/** and generated/**',
  intoCompanion: 'nothing of the hub imports the companion (adapters/nodes/companion/ is its own process)',
};

/** The companion `palai node` runs on another machine: the protocol's wire modules are all it shares with the hub. */
const COMPANION = 'adapters/nodes/companion/';
const COMPANION_SEES = [/^adapters\/nodes\/companion\//, /^core\/surfaces\/nodes\/wire\//, /^generated\//];

// Statement-level imports start a line (so commented-out code is not read);
// the clause between the keyword and `from` holds only names, braces, `*` and comments.
const STATIC = /^[ \t]*(?:import|export)\b(?:(?!\b(?:import|export)\b)(?:[\w\s{},*$]|\/\/[^\n]*|\/\*[\s\S]*?\*\/))*?\bfrom\s*(['"])([^'"\n]+)\1/gm;
const SIDE_EFFECT = /^[ \t]*import\s*(['"])([^'"\n]+)\1/gm;
const DYNAMIC = /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g;

/** Every module specifier of a source file, with the line it is on. */
export function importsOf(source) {
  const lineAt = (index) => source.slice(0, index).split('\n').length;
  const found = [];
  for (const pattern of [STATIC, SIDE_EFFECT]) {
    for (const m of source.matchAll(pattern)) found.push({ line: lineAt(m.index), specifier: m[2] });
  }
  for (const m of source.matchAll(DYNAMIC)) {
    const lineStart = source.lastIndexOf('\n', m.index) + 1;
    const before = source.slice(lineStart, m.index);
    if (/\/\/|^\s*\/?\*/.test(before)) continue; // inside a comment
    found.push({ line: lineAt(m.index), specifier: m[2] });
  }
  return found.sort((a, b) => a.line - b.line);
}

/** A relative specifier as a repo path (`./x.js` names `x.ts`); a bare one as its package name. */
function resolveTarget(root, fromFile, specifier) {
  if (!specifier.startsWith('.')) {
    const parts = specifier.split('/');
    return { pkg: specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0] };
  }
  const path = posix.normalize(posix.join(posix.dirname(fromFile), specifier));
  const base = path.replace(/\.(?:[cm]?js|ts)$/, '');
  const candidates = [`${base}.ts`, path, `${path}/index.ts`];
  return { path: candidates.find((c) => existsSync(join(root, c)) && statSync(join(root, c)).isFile()) ?? `${base}.ts` };
}

/** The folder a surface file belongs to: adapters/<x>, adapters/models/<provider>, bots/<x>. */
function surfaceOf(path) {
  const parts = path.split('/');
  if (parts[0] !== 'adapters' && parts[0] !== 'bots') return null;
  const depth = path.startsWith('adapters/models/') && parts.length > 3 ? 3 : 2;
  return parts.slice(0, depth).join('/');
}

const KERNEL_API = [/^core\/api\//, /^core\/(?!surfaces\/).*-port\.ts$/, /^core\/errors\//, /^core\/(ids|config|logger|response-status)\.ts$/];

/** The wing a core file belongs to (core/surfaces/<name>/…), or null for the kernel. */
function wingOf(path) {
  const match = /^core\/surfaces\/([^/]+)\//.exec(path);
  return match ? match[1] : null;
}

/** The wing a surface's folder is paired with: adapters/<name> and bots/<name> own core/surfaces/<name>. */
const surfaceWing = (surface) => surface?.split('/')[1] ?? null;

/** A wing's files a surface may see: its API slice, its ports and its wire modules (what both ends of its protocol share). */
const wingFace = (wing, path) =>
  path === `core/surfaces/${wing}/${wing}-api.ts` ||
  path.startsWith(`core/surfaces/${wing}/wire/`) ||
  (path.startsWith(`core/surfaces/${wing}/`) && path.endsWith('-port.ts'));

/** The rule an import breaks, or null. */
export function ruleBroken(fromFile, target) {
  const inCore = fromFile.startsWith('core/');
  if (target.pkg) {
    if (CRON_LIBRARIES.some((p) => p.test(target.pkg)) && fromFile !== CRON_MODULE) return RULES.cronLibrary;
    if (!inCore) return null;
    if (SURFACE_LIBRARIES.some((p) => p.test(target.pkg))) return RULES.coreLibrary;
    if (STORE_LIBRARIES.some((p) => p.test(target.pkg)) && !fromFile.startsWith('core/store/')) return RULES.storeDriver;
    return null;
  }
  const to = target.path;
  if (fromFile.startsWith(COMPANION)) return COMPANION_SEES.some((p) => p.test(to)) ? null : RULES.companion;
  if (to.startsWith(COMPANION)) return RULES.intoCompanion;
  if (to.startsWith('cli/')) return inCore ? RULES.coreInward : RULES.cli;
  if (inCore) {
    if (/^(adapters|bots)\//.test(to)) return RULES.coreInward;
    const fromWing = wingOf(fromFile);
    const toWing = wingOf(to);
    if (toWing === null || toWing === fromWing) return null;
    return fromWing === null ? RULES.kernelWing : RULES.otherWing;
  }
  if (to === 'core/store/db.ts') return RULES.dbHandle;
  const toWing = wingOf(to);
  if (toWing !== null) return toWing === surfaceWing(surfaceOf(fromFile)) && wingFace(toWing, to) ? null : RULES.ownWing;
  if (to.startsWith('core/')) return KERNEL_API.some((p) => p.test(to)) ? null : RULES.kernelApi;
  const from = surfaceOf(fromFile);
  const into = surfaceOf(to);
  if (!into || into === from) return null;
  const modelShared = into === 'adapters/models/shared' && from?.startsWith('adapters/models/');
  return modelShared ? null : RULES.otherSurface;
}

function tsFiles(root, dir) {
  const full = join(root, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full, { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : tsFiles(root, path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

export function checkImports(root) {
  return SCANNED.flatMap((dir) => tsFiles(root, dir)).flatMap((file) =>
    importsOf(readFileSync(join(root, file), 'utf8')).flatMap(({ line, specifier }) => {
      const target = resolveTarget(root, file, specifier);
      const rule = ruleBroken(file, target);
      return rule ? [{ file, line, target: target.path ?? target.pkg, rule }] : [];
    }),
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const rootArg = args.find((a) => a !== '--json');
  const root = rootArg ?? join(dirname(fileURLToPath(import.meta.url)), '..');
  const violations = checkImports(root);
  if (json) console.log(JSON.stringify(violations, null, 2));
  else {
    for (const v of violations) console.log(`${v.file}:${v.line} imports ${v.target} — ${v.rule}`);
    console.error(violations.length ? `${violations.length} import(s) break the dependency rule` : 'imports follow the dependency rule');
  }
  process.exitCode = violations.length ? 1 : 0;
}
