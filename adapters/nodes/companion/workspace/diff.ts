// Unified diffs, parsed and applied in memory, strictly: hunk lines must add
// up to their header's counts, and a hunk applies only where its old lines
// are, exactly, at its stated line or up to 3 lines off (no fuzz). Texts here
// are byte strings (latin1, one character a byte), so a file that is not
// UTF-8 keeps every byte the patch does not change.
import { checkRelative } from './paths.js';
import { shown, WorkspaceFailed } from './profile.js';

export interface Hunk {
  /** 1-based within its file section, for messages. */
  number: number;
  oldStart: number;
  oldCount: number;
  old: string[];
  new: string[];
  /** `\ No newline at end of file` after the old side's last line, or the new side's. */
  oldNoNewline: boolean;
  newNoNewline: boolean;
}

export interface FileSection {
  /** UTF-8 paths with one `a/` or `b/` taken off; null for /dev/null. */
  oldPath: string | null;
  newPath: string | null;
  hunks: Hunk[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
/** The standard offset search: how far from its stated line a hunk may be found. */
const MAX_SHIFT = 3;
const SHIFTS = [0, ...Array.from({ length: MAX_SHIFT }, (_, i) => [-(i + 1), i + 1]).flat()];

export function parsePatch(text: string): FileSection[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const sections: FileSection[] = [];
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    if (line.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
      const section: FileSection = { oldPath: headerPath(line), newPath: headerPath(lines[i + 1]), hunks: [] };
      // Checked before anything else, so no message below can echo an absolute path.
      for (const path of [section.oldPath, section.newPath]) if (path !== null) checkRelative(path);
      const label = shown(section.newPath ?? section.oldPath ?? '/dev/null');
      for (i += 2; lines[i]?.startsWith('@@');) i = parseHunk(lines, i, section, label);
      sections.push(section);
      continue;
    }
    // A mail signature (git format-patch) ends the patch.
    if (line === '-- ') break;
    if (/^(GIT binary patch|Binary files )/.test(line)) throw new WorkspaceFailed('binary patches are not supported');
    if (/^(rename|copy) (from|to) /.test(line)) throw new WorkspaceFailed('renames and copies are not supported');
    // Before the first section anything goes (a message, `diff --git`); after it, a hunk-like line outside a
    // hunk means a header's counts are off, and applying the rest would be a guess.
    if (sections.length > 0 && /^[ +\-\\@]/.test(line)) {
      throw new WorkspaceFailed(`the patch has a line outside any hunk, after the section for ${shown(sections.at(-1)!.newPath ?? sections.at(-1)!.oldPath)}`);
    }
    i += 1;
  }
  if (sections.length === 0) throw new WorkspaceFailed('the patch has no file sections (--- and +++ lines)');
  return sections;
}

/** One hunk from its header at `i`; returns where the next line is. */
function parseHunk(lines: string[], i: number, section: FileSection, label: string): number {
  const number = section.hunks.length + 1;
  const malformed = (what: string) => new WorkspaceFailed(`hunk ${number} of ${label} ${what}`);
  const header = HUNK_HEADER.exec(lines[i]);
  if (!header) throw malformed('has a malformed @@ header');
  const hunk: Hunk = { number, oldStart: Number(header[1]), oldCount: Number(header[2] ?? 1), old: [], new: [], oldNoNewline: false, newNoNewline: false };
  if (hunk.oldStart === 0 && hunk.oldCount > 0) throw malformed('starts at line 0 but removes or keeps lines');
  let oldLeft = hunk.oldCount;
  let newLeft = Number(header[4] ?? 1);
  let last = '';
  for (i += 1; i < lines.length && (oldLeft > 0 || newLeft > 0 || lines[i].startsWith('\\')); i += 1) {
    const line = lines[i];
    // An empty line is taken as an empty context line whose leading space was lost on the way.
    const kind = line === '' ? ' ' : line[0];
    const body = line.slice(1);
    if (kind === '\\') {
      if (last === '') throw malformed('has a "\\ No newline" line before any line');
      if (last !== '+') hunk.oldNoNewline = true;
      if (last !== '-') hunk.newNoNewline = true;
      last = '\\';
      continue;
    }
    const onOld = kind === ' ' || kind === '-';
    const onNew = kind === ' ' || kind === '+';
    if ((!onOld && !onNew) || (onOld && oldLeft === 0) || (onNew && newLeft === 0)) throw malformed("has lines that do not match its header's counts");
    if ((onOld && hunk.oldNoNewline) || (onNew && hunk.newNoNewline)) throw malformed('has lines after "\\ No newline at end of file"');
    if (onOld) {
      hunk.old.push(body);
      oldLeft -= 1;
    }
    if (onNew) {
      hunk.new.push(body);
      newLeft -= 1;
    }
    last = kind;
  }
  if (oldLeft > 0 || newLeft > 0) throw malformed("ends before its header's counts");
  section.hunks.push(hunk);
  return i;
}

/** The path of a `---` or `+++` line: up to a tab (a timestamp may follow), C-quoted if git quoted it, one `a/` or `b/` off. */
function headerPath(line: string): string | null {
  let name = line.slice(4);
  if (name.startsWith('"')) name = unquote(name);
  else name = name.split('\t')[0].trimEnd();
  if (name === '/dev/null') return null;
  if (name.startsWith('a/') || name.startsWith('b/')) name = name.slice(2);
  return Buffer.from(name, 'latin1').toString('utf8');
}

const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', t: '\t', n: '\n', v: '\v', f: '\f', r: '\r' };

/** Git's quoting of an unusual name: C escapes, octal for bytes. */
function unquote(quoted: string): string {
  const end = quoted.lastIndexOf('"');
  if (end <= 0) throw new WorkspaceFailed('the patch has a malformed quoted file name');
  return quoted
    .slice(1, end)
    .replace(/\\([0-7]{1,3}|.)/g, (_, c: string) => (/^[0-7]/.test(c) ? String.fromCharCode(parseInt(c, 8) & 0xff) : (ESCAPES[c] ?? c)));
}

/** The content a section's hunks make of `original` (both byte strings); WorkspaceFailed naming the hunk that does not apply. */
export function applySection(original: string, section: FileSection, label: string): string {
  const lines = original === '' ? [] : original.split('\n');
  // Whether the last line ends in a newline; an empty file has no last line to lack one.
  const hadNewline = lines.length === 0 || lines.at(-1) === '';
  if (lines.at(-1) === '') lines.pop();

  const out: string[] = [];
  let endsWithNewline = hadNewline;
  let cursor = 0;
  let previousEnd = 0;
  for (const hunk of section.hunks) {
    // `-l,0` inserts after line l; otherwise the hunk starts at line l.
    const oldFrom = hunk.oldCount === 0 ? hunk.oldStart : hunk.oldStart - 1;
    if (oldFrom < previousEnd) throw new WorkspaceFailed(`hunk ${hunk.number} of ${label} overlaps hunk ${hunk.number - 1} or comes before it`);
    previousEnd = oldFrom + hunk.oldCount;
    // Positions are in the original file's lines, where the header's line numbers are.
    const at = locate(lines, hadNewline, hunk, oldFrom, cursor);
    if (at < 0) throw new WorkspaceFailed(`hunk ${hunk.number} of ${label} does not apply at line ${hunk.oldStart}`);
    for (let k = cursor; k < at; k += 1) out.push(lines[k]);
    for (const line of hunk.new) out.push(line);
    cursor = at + hunk.old.length;
    if (cursor === lines.length) endsWithNewline = !hunk.newNoNewline;
    else if (hunk.newNoNewline) throw new WorkspaceFailed(`hunk ${hunk.number} of ${label} ends the file without a newline but does not reach its end`);
  }
  for (let k = cursor; k < lines.length; k += 1) out.push(lines[k]);
  return out.join('\n') + (out.length > 0 && endsWithNewline ? '\n' : '');
}

/** Where the hunk's old lines are, at `expected` or up to 3 lines off but never before `floor`; -1 if nowhere. */
function locate(lines: string[], hadNewline: boolean, hunk: Hunk, expected: number, floor: number): number {
  for (const delta of SHIFTS) {
    const at = expected + delta;
    if (at < floor || at + hunk.old.length > lines.length) continue;
    if (!hunk.old.every((line, k) => lines[at + k] === line)) continue;
    // The end of the file must agree too: "no newline" only at an end without one, and an end without one only if said.
    const atEnd = at + hunk.old.length === lines.length;
    if (hunk.oldNoNewline ? !(atEnd && !hadNewline) : atEnd && !hadNewline) continue;
    return at;
  }
  return -1;
}
