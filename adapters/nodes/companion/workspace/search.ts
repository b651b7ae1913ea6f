// workspace.search: a literal, case-sensitive substring looked for line by
// line. No regular expression, so no pattern can run away. The walk is in
// sorted order and bounded in files, entries, matches and result bytes; it
// never follows a symlink to a directory, and a symlinked file counts only if
// its real path is inside the profile's roots. The walk uses synchronous
// calls, some 25 times faster than fs/promises over many small files, and
// gives the event loop its turn every few milliseconds.
import { closeSync, constants, type Dirent, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join, matchesGlob } from 'node:path';
import { setImmediate as yieldTurn } from 'node:timers/promises';
import { decodeText, looksBinary } from './files.js';
import { checkGlob } from './glob.js';
import { containingRoots, resolveTarget, within } from './paths.js';
import { type FileProfile, guarded, shown, WorkspaceFailed } from './profile.js';

export const MAX_SCANNED_FILES = 10_000;
export const DEFAULT_MATCHES = 100;
export const MAX_MATCHES = 500;
export const MAX_RESULT_BYTES = 65_536;
export const MAX_MATCH_CHARS = 500;
/** Directory entries looked at, so a walk whose glob keeps nothing still ends. */
const MAX_ENTRIES = 100_000;
/** Bytes read in all, so 10,000 files each near the profile's largest still make a bounded search. */
const MAX_SCANNED_BYTES = 256 * 1024 * 1024;
/** How much of a long line before its match the excerpt keeps. */
const LEAD_CHARS = 100;
/** The longest the walk holds the event loop before it yields. */
const SLICE_MS = 10;

export interface SearchMatch {
  path: string;
  line: number;
  text: string;
}

export interface SearchResult {
  matches: SearchMatch[];
  files_scanned: number;
  truncated: boolean;
}

export async function workspaceSearch(profile: FileProfile, input: { pattern: string; path?: string; glob?: string; limit?: number }): Promise<SearchResult> {
  const path = input.path ?? '.';
  return guarded(`could not search ${shown(path)}`, async () => {
    if (typeof input.pattern !== 'string' || input.pattern.length === 0) throw new WorkspaceFailed('the pattern must be a non-empty string');
    const limit = input.limit ?? DEFAULT_MATCHES;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new WorkspaceFailed('the limit must be a whole number from 1');
    const glob = input.glob === undefined ? undefined : checkGlob(input.glob);
    const target = await resolveTarget(profile, path, 'read');
    if (!target.exists) throw new WorkspaceFailed(`${target.shown} does not exist`);

    const search = new Search(
      profile,
      input.pattern,
      Math.min(limit, MAX_MATCHES),
      glob,
      // A symlinked file counts only inside these: the roots, or the parts of them the call is confined to.
      await containingRoots(profile, 'read'),
    );
    const stats = await stat(target.real);
    // Result paths are in the model's terms (relative to the root, through any symlink it named), so they can be read back as they are.
    const prefix = target.relative === '.' ? '' : target.relative;
    if (stats.isDirectory()) await search.walk(target.real, prefix);
    else if (stats.isFile()) await search.file(target.real, target.relative);
    else throw new WorkspaceFailed(`${target.shown} is neither a file nor a directory`);
    return { matches: search.matches, files_scanned: search.scanned, truncated: search.truncated };
  });
}

class Search {
  readonly matches: SearchMatch[] = [];
  scanned = 0;
  truncated = false;
  private entries = 0;
  private resultBytes = 0;
  private bytesRead = 0;
  private sliceStart = Date.now();

  constructor(
    private readonly profile: FileProfile,
    private readonly pattern: string,
    private readonly limit: number,
    private readonly glob: string | undefined,
    private readonly roots: string[],
  ) {}

  /** Depth first, names in code-unit order, so the same tree always gives the same result. */
  async walk(dir: string, prefix: string): Promise<void> {
    await this.turn();
    // Still a directory and not a symlink put in its place since it was listed (readdir would follow one).
    if (!tryOr(() => lstatSync(dir).isDirectory(), false)) return;
    // A directory that cannot be listed is passed over, as a file that cannot be read is.
    const entries: Dirent[] = tryOr(() => readdirSync(dir, { withFileTypes: true }), []);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (this.truncated) return;
      if (++this.entries > MAX_ENTRIES) {
        this.truncated = true;
        return;
      }
      const real = join(dir, entry.name);
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await this.walk(real, relative);
      else if (entry.isFile()) await this.file(real, relative);
      else if (entry.isSymbolicLink()) await this.link(real, relative);
    }
  }

  /** A symlink is searched only when it is a file whose real path is inside the roots; a symlinked directory is never entered. */
  private async link(path: string, relative: string): Promise<void> {
    const real = tryOr(() => realpathSync(path), null);
    if (real === null || !this.roots.some((root) => within(root, real))) return;
    if (tryOr(() => statSync(real).isFile(), false)) await this.file(real, relative);
  }

  async file(real: string, relative: string): Promise<void> {
    if (this.glob !== undefined && !matchesGlob(relative, this.glob)) return;
    if (this.scanned >= MAX_SCANNED_FILES) {
      this.truncated = true;
      return;
    }
    this.scanned += 1;
    await this.turn();
    const content = this.text(real);
    // A line holds no newline, so a pattern with one matches nothing.
    if (content === null || this.pattern.includes('\n')) return;
    // indexOf over the whole text, lines counted only up to each match: linear in the file, however long its lines.
    let line = 1;
    let lineStart = 0;
    for (let at = content.indexOf(this.pattern); at >= 0 && !this.truncated;) {
      for (let newline = content.indexOf('\n', lineStart); newline >= 0 && newline < at; newline = content.indexOf('\n', lineStart)) {
        line += 1;
        lineStart = newline + 1;
      }
      const newline = content.indexOf('\n', at);
      const lineEnd = newline < 0 ? content.length : newline;
      this.add(relative, line, content.slice(lineStart, lineEnd).replace(/\r$/, ''), at - lineStart);
      // One match a line: the next is looked for from the next line.
      if (newline < 0) return;
      at = content.indexOf(this.pattern, newline + 1);
    }
  }

  /** The file's text, or null when it is binary, over the profile's largest file, or cannot be read. */
  private text(real: string): string | null {
    // As openRegular (files.ts): no symlink followed, no FIFO waited on, only a regular file read.
    const fd = tryOr(() => openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK), null);
    if (fd === null) return null;
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile() || stats.size > this.profile.maxFileBytes) return null;
      if ((this.bytesRead += stats.size) > MAX_SCANNED_BYTES) {
        this.truncated = true;
        return null;
      }
      const bytes = Buffer.alloc(stats.size);
      let filled = 0;
      while (filled < bytes.length) {
        const n = readSync(fd, bytes, filled, bytes.length - filled, filled);
        if (n === 0) break;
        filled += n;
      }
      const read = bytes.subarray(0, filled);
      return looksBinary(read, true) ? null : decodeText(read);
    } catch {
      return null;
    } finally {
      closeSync(fd);
    }
  }

  /** Yields to the event loop once the walk has held it for a slice. */
  private async turn(): Promise<void> {
    if (Date.now() - this.sliceStart < SLICE_MS) return;
    await yieldTurn();
    this.sliceStart = Date.now();
  }

  private add(path: string, line: number, text: string, at: number): void {
    if (this.matches.length >= this.limit) {
      this.truncated = true;
      return;
    }
    const excerpt = cut(text, at);
    const bytes = Buffer.byteLength(excerpt, 'utf8') + Buffer.byteLength(path, 'utf8');
    if (this.resultBytes + bytes > MAX_RESULT_BYTES) {
      this.truncated = true;
      return;
    }
    this.resultBytes += bytes;
    this.matches.push({ path, line, text: excerpt });
  }
}

/** A long line cut to 500 characters around its match (from a little before it), never splitting a surrogate pair. */
function cut(text: string, at: number): string {
  if (text.length <= MAX_MATCH_CHARS) return text;
  let start = Math.max(0, Math.min(at - LEAD_CHARS, text.length - MAX_MATCH_CHARS));
  if (isLowSurrogate(text.charCodeAt(start))) start += 1;
  let end = start + MAX_MATCH_CHARS;
  if (isLowSurrogate(text.charCodeAt(end))) end -= 1;
  return text.slice(start, end);
}

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

function tryOr<T, F>(run: () => T, fallback: F): T | F {
  try {
    return run();
  } catch {
    return fallback;
  }
}
