// path.matchesGlob compiles a glob to a backtracking regular expression, and
// some globs take it exponential time on one path: three `*` in a name take
// milliseconds a path, extended globs like `+(a|aa)` and brace ranges like
// `{1..100000}` far longer. A search matches up to 10,000 paths, so only globs
// whose cost stays small are let through.
import { shown, WorkspaceDenied, WorkspaceFailed } from './profile.js';

export const MAX_GLOB_CHARS = 256;
/** Runs of `*` within one name (a whole `**` name is not one). */
const MAX_STARS_PER_NAME = 2;
const MAX_GLOBSTARS = 3;
const MAX_BRACE_ALTERNATIVES = 16;

/** The glob if matchesGlob can match it cheaply; else WorkspaceDenied. */
export function checkGlob(glob: unknown): string {
  if (typeof glob !== 'string' || glob.length === 0) throw new WorkspaceFailed('the glob must be a non-empty string');
  if (glob.length > MAX_GLOB_CHARS) throw new WorkspaceDenied(`the glob is over ${MAX_GLOB_CHARS} characters`);
  if (glob.includes('\u0000')) throw new WorkspaceDenied('the glob holds a NUL character');
  if (/[?*+@!]\(/.test(glob)) throw new WorkspaceDenied(`the glob ${shown(glob)} uses an extended pattern like +(…), which the node does not allow`);
  for (const expanded of expandBraces(glob)) {
    const names = expanded.split('/');
    if (names.filter((name) => name === '**').length > MAX_GLOBSTARS) throw new WorkspaceDenied(`the glob ${shown(glob)} has over ${MAX_GLOBSTARS} ** names`);
    const starry = names.find((name) => name !== '**' && (name.match(/\*+/g)?.length ?? 0) > MAX_STARS_PER_NAME);
    if (starry !== undefined) throw new WorkspaceDenied(`the glob ${shown(glob)} has over ${MAX_STARS_PER_NAME} * in one name`);
  }
  return glob;
}

/** One `{a,b,…}` group at most, of plain alternatives (no nesting, no `..` range), as the globs it stands for. */
function expandBraces(glob: string): string[] {
  const open = glob.indexOf('{');
  const close = glob.indexOf('}');
  if (open < 0 && close < 0) return [glob];
  const inner = glob.slice(open + 1, close);
  if (open < 0 || close < open || glob.indexOf('{', open + 1) >= 0 || glob.indexOf('}', close + 1) >= 0 || inner.includes('..')) {
    throw new WorkspaceDenied(`the glob ${shown(glob)} may have one {a,b} group, without nesting or ranges`);
  }
  const alternatives = inner.split(',');
  if (alternatives.length > MAX_BRACE_ALTERNATIVES) throw new WorkspaceDenied(`the glob's {…} group has over ${MAX_BRACE_ALTERNATIVES} alternatives`);
  return alternatives.map((alternative) => glob.slice(0, open) + alternative + glob.slice(close + 1));
}
