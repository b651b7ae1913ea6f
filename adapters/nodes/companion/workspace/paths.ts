// The security core. The model names files only relative to the operator's
// roots; a path is refused (WorkspaceDenied) before any content is touched
// when it could name anything else: absolute, a drive or UNC path, a
// backslash, a `..` segment, or a real path (symlinks resolved) outside the
// real path of every allowed root. Between this check and the open a local
// process could still swap a directory for a symlink; opening the real path
// with O_NOFOLLOW (files.ts) narrows that to the parent directories.
import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { type FileProfile, shown, WorkspaceDenied, WorkspaceFailed } from './profile.js';

export const MAX_PATH_BYTES = 4096;

/** Reads may use every root; writes only the writable ones. */
export type Access = 'read' | 'write';

export interface Target {
  /** The model's path as a message may show it. */
  shown: string;
  /** The path normalised, `/` between names, relative to its root; `.` for the root itself. */
  relative: string;
  /** The real path, inside an allowed root; for a file not there yet, its parent's real path joined with its name. */
  real: string;
  exists: boolean;
}

/** The names of a relative path the model sent, or WorkspaceDenied. */
export function checkRelative(path: unknown): string[] {
  if (typeof path !== 'string' || path.length === 0) throw new WorkspaceDenied('the path is empty');
  if (path.includes('\u0000')) throw new WorkspaceDenied('the path holds a NUL character');
  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES) throw new WorkspaceDenied(`the path ${shown(path)} is over ${MAX_PATH_BYTES} bytes`);
  // These three are not echoed: they may be absolute paths of the node.
  if (path.includes('\\')) throw new WorkspaceDenied('the path holds a backslash; paths are relative to the profile, with / between names');
  if (/^[A-Za-z]:/.test(path)) throw new WorkspaceDenied('the path is a drive path; paths are relative to the profile');
  if (path.startsWith('/')) throw new WorkspaceDenied('the path is absolute; paths are relative to the profile');
  const names = path.split('/').filter((name) => name !== '' && name !== '.');
  // Every `..` is refused, not only one that would climb out: no lexical case to get wrong.
  if (names.includes('..')) throw new WorkspaceDenied(`the path ${shown(path)} has a .. segment`);
  return names;
}

/** Whether `target` is `root` or under it (both absolute and real). */
export function within(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The configured roots an access may use, in order: reads try the readable roots first, then the writable ones. */
export function rootsFor(profile: FileProfile, access: Access): string[] {
  const roots = access === 'read' ? [...profile.readableRoots, ...profile.writableRoots] : profile.writableRoots;
  return [...new Set(roots)];
}

/** Each usable root with its real path; a root that is not absolute or not there is left out. */
export async function realRoots(roots: string[]): Promise<{ root: string; real: string }[]> {
  const found: { root: string; real: string }[] = [];
  for (const root of roots) {
    if (!isAbsolute(root)) continue;
    const real = await realpath(root).catch(() => null);
    if (real !== null) found.push({ root, real });
  }
  return found;
}

/**
 * The real paths an access may end inside: the allowed roots' real paths, or,
 * for a plan confined to parts of the profile, the real paths of those parts
 * under each root (a part that is not there, or whose real path leaves its
 * root, confines to nothing).
 */
export async function containingRoots(profile: FileProfile, access: Access): Promise<string[]> {
  const roots = await realRoots(rootsFor(profile, access));
  if (!profile.within) return roots.map((r) => r.real);
  const parts: string[] = [];
  for (const { real } of roots) {
    for (const part of profile.within) {
      const narrowed = await realpath(join(real, ...checkRelative(part))).catch(() => null);
      if (narrowed !== null && within(real, narrowed)) parts.push(narrowed);
    }
  }
  return parts;
}

/**
 * Where a relative path leads for an access: against the first root it is
 * found in (for a file not there yet, the first whose directory for it is
 * there; else the first root), and only if its real path is inside an
 * allowed root's real path.
 */
export async function resolveTarget(profile: FileProfile, path: unknown, access: Access): Promise<Target> {
  const names = checkRelative(path);
  const label = shown(path);
  const kind = access === 'read' ? 'readable' : 'writable';
  const roots = await realRoots(rootsFor(profile, access));
  if (roots.length === 0) throw new WorkspaceDenied(`the profile has no ${kind} root on this node`);

  const candidates = roots.map(({ root }) => join(root, ...names));
  const candidate = (await firstThere(candidates, (c) => c)) ?? (await firstThere(candidates, dirname)) ?? candidates[0];

  let real: string;
  let exists = true;
  try {
    real = await realpath(candidate);
  } catch (error) {
    if (!missing(error)) throw error;
    // A symlink to nothing: where it would lead is not checked, so it is refused.
    if (await isThere(candidate)) throw new WorkspaceDenied(`${label} is a symbolic link that leads nowhere`);
    try {
      real = join(await realpath(dirname(candidate)), basename(candidate));
    } catch (parentError) {
      if (!missing(parentError)) throw parentError;
      throw new WorkspaceFailed(`the directory of ${label} does not exist`);
    }
    exists = false;
  }
  if (!roots.some((r) => within(r.real, real))) throw new WorkspaceDenied(`${label} leads outside the profile's ${kind} roots`);
  if (profile.within && !(await containingRoots(profile, access)).some((part) => within(part, real))) {
    throw new WorkspaceDenied(`${label} leads outside the parts of the profile this call is confined to`);
  }
  return { shown: label, relative: names.join('/') || '.', real, exists };
}

/** The first candidate for which `probe(candidate)` is there (a symlink counts, whatever it points to). */
async function firstThere(candidates: string[], probe: (candidate: string) => string): Promise<string | undefined> {
  for (const candidate of candidates) if (await isThere(probe(candidate))) return candidate;
  return undefined;
}

const isThere = (path: string): Promise<boolean> =>
  lstat(path)
    .then(() => true)
    .catch(() => false);

const missing = (error: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');
