// The companion's file operations over a profile's roots, on real temporary
// directories: reads, literal searches, whole-file writes and all-or-nothing
// patches, and the path rules (relative only, no `..`, no symlink out) that
// every one of them goes through. A refusal's class is asserted, and that its
// message names no directory of the node.
import assert from 'node:assert/strict';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { commitChanges } from '../../adapters/nodes/companion/workspace/commit.js';
import { replaceFile } from '../../adapters/nodes/companion/workspace/files.js';
import {
  type FileProfile,
  workspacePatch,
  workspaceRead,
  workspaceSearch,
  workspaceWrite,
  WorkspaceDenied,
  WorkspaceFailed,
} from '../../adapters/nodes/companion/workspace/index.js';
import { within } from '../../adapters/nodes/companion/workspace/paths.js';

let root: string;
let outside: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'palai-workspace-'));
  outside = mkdtempSync(join(tmpdir(), 'palai-workspace-outside-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const profile = (overrides: Partial<FileProfile> = {}): FileProfile => ({
  alias: 'repo',
  revision: null,
  readableRoots: [root],
  writableRoots: [root],
  allowCreate: true,
  allowOverwrite: true,
  maxFileBytes: 1_048_576,
  ...overrides,
});

/** A file under the root, its directories made. */
function put(relative: string, content: string | Buffer, dir = root): string {
  const path = join(dir, relative);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, content);
  return path;
}

const read = (relative: string): string => readFileSync(join(root, relative), 'utf8');
const temporaries = (dir: string): string[] => readdirSync(dir).filter((name) => /^\.palai-.*\.tmp$/.test(name));

/** The operation refused with `kind`; its message holds no directory of the node. */
async function refused(operation: Promise<unknown>, kind: typeof WorkspaceDenied | typeof WorkspaceFailed, message?: RegExp): Promise<Error> {
  const error = await operation.then(
    (value) => assert.fail(`expected ${kind.name}, got ${JSON.stringify(value)}`),
    (e: unknown) => e as Error,
  );
  assert.ok(error instanceof kind, `expected ${kind.name}, got ${error.name}: ${error.message}`);
  for (const dir of [root, outside, tmpdir()]) assert.ok(!error.message.includes(dir), `the message names a directory: ${error.message}`);
  if (message) assert.match(error.message, message);
  return error;
}

/** A unified diff of one file from `before` to `after` lines, as one hunk over the whole file. */
function wholeFileDiff(path: string, before: string[], after: string[]): string {
  return [
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -1,${before.length} +1,${after.length} @@`,
    ...before.map((l) => `-${l}`),
    ...after.map((l) => `+${l}`),
    '',
  ].join('\n');
}

// --- read

test('read: a text file whole, its path normalised', async () => {
  put('src/a.txt', 'hello\nworld\n');
  const result = await workspaceRead(profile(), { path: './src//a.txt' });
  assert.deepEqual(result, { path: 'src/a.txt', size: 12, offset: 0, length: 12, binary: false, content: 'hello\nworld\n', truncated: false });
});

test('read: a NUL or bytes that are not UTF-8 in the first 8 KiB make a file binary, content null; a character cut at 8 KiB does not', async () => {
  put('nul.bin', Buffer.from([0x61, 0x00, 0x62]));
  put('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  put('cut.txt', 'a'.repeat(8191) + 'é' + 'tail');
  put('late-nul.txt', Buffer.concat([Buffer.from('a'.repeat(9000)), Buffer.from([0])]));
  const nul = await workspaceRead(profile(), { path: 'nul.bin' });
  assert.deepEqual([nul.binary, nul.content, nul.size, nul.length], [true, null, 3, 3]);
  assert.equal((await workspaceRead(profile(), { path: 'latin1.txt' })).binary, true);
  const cut = await workspaceRead(profile(), { path: 'cut.txt' });
  assert.equal(cut.binary, false);
  assert.ok(cut.content!.endsWith('étail'));
  // Past the sample a NUL is text, stored as U+FFFD.
  const late = await workspaceRead(profile(), { path: 'late-nul.txt', offset: 8999 });
  assert.deepEqual([late.binary, late.content], [false, 'a\uFFFD']);
});

test('read: offset and length pick a window; truncated says the file goes on', async () => {
  put('digits.txt', '0123456789');
  const p = profile();
  assert.deepEqual(await workspaceRead(p, { path: 'digits.txt', offset: 3, length: 4 }), {
    path: 'digits.txt',
    size: 10,
    offset: 3,
    length: 4,
    binary: false,
    content: '3456',
    truncated: true,
  });
  const tail = await workspaceRead(p, { path: 'digits.txt', offset: 8, length: 100 });
  assert.deepEqual([tail.content, tail.length, tail.truncated], ['89', 2, false]);
  const past = await workspaceRead(p, { path: 'digits.txt', offset: 50 });
  assert.deepEqual([past.content, past.length, past.truncated], ['', 0, false]);
  await refused(workspaceRead(p, { path: 'digits.txt', offset: -1 }), WorkspaceFailed, /offset/);
  await refused(workspaceRead(p, { path: 'digits.txt', length: 1.5 }), WorkspaceFailed, /length/);
});

test('read: at most 512 KiB (and never over maxFileBytes) however much is asked', async () => {
  put('big.txt', 'x'.repeat(600 * 1024));
  const whole = await workspaceRead(profile(), { path: 'big.txt' });
  assert.deepEqual([whole.length, whole.content!.length, whole.truncated, whole.size], [524_288, 524_288, true, 600 * 1024]);
  assert.equal((await workspaceRead(profile(), { path: 'big.txt', length: 10_000_000 })).length, 524_288);
  const small = await workspaceRead(profile({ maxFileBytes: 1000 }), { path: 'big.txt', offset: 10 });
  assert.deepEqual([small.length, small.truncated], [1000, true]);
});

test('read: a file growing while it is read gives at most what was asked', async () => {
  const path = put('log.txt', 'L'.repeat(1024));
  let growing = true;
  const grower = (async () => {
    while (growing) {
      appendFileSync(path, 'G'.repeat(64 * 1024));
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  try {
    for (let i = 0; i < 20; i += 1) {
      const asked = await workspaceRead(profile(), { path: 'log.txt', length: 4096 });
      assert.ok(asked.length <= 4096 && asked.content!.length === asked.length, `read ${asked.length}`);
      assert.ok(asked.content!.startsWith('L'.repeat(1024)));
      const whole = await workspaceRead(profile(), { path: 'log.txt' });
      assert.ok(whole.length <= 524_288 && whole.content!.length === whole.length, `read ${whole.length}`);
      assert.equal(whole.truncated, whole.offset + whole.length < whole.size);
    }
  } finally {
    growing = false;
    await grower;
  }
});

test('read: a file that is not there, or a directory, is a failure', async () => {
  mkdirSync(join(root, 'dir'));
  await refused(workspaceRead(profile(), { path: 'missing.txt' }), WorkspaceFailed, /"missing\.txt" does not exist/);
  await refused(workspaceRead(profile(), { path: 'dir' }), WorkspaceFailed, /not a regular file/);
});

test('read: the readable roots first, then the writable ones; a root that is not there is passed over', async () => {
  const second = join(outside, 'second');
  mkdirSync(second);
  put('only-in-second.txt', 'two', second);
  const p = profile({ readableRoots: [join(root, 'absent'), root], writableRoots: [second] });
  assert.equal((await workspaceRead(p, { path: 'only-in-second.txt' })).content, 'two');
  put('both.txt', 'one');
  put('both.txt', 'two', second);
  assert.equal((await workspaceRead(p, { path: 'both.txt' })).content, 'one');
});

// --- search

test('search: literal, case-sensitive matches line by line, filtered by glob, in sorted order', async () => {
  put('src/b.ts', 'const foo = 1;\nno match\nfoo();\n');
  put('src/a.ts', 'Foo is not foo\r\n');
  put('src/deep/c.ts', 'foofoo\n');
  put('src/d.js', 'foo\n');
  put('docs/e.md', 'foo\n');
  put('src/regex.ts', 'abc\na.c\n');
  const p = profile();
  const result = await workspaceSearch(p, { pattern: 'foo', glob: '**/*.ts' });
  assert.deepEqual(result, {
    matches: [
      { path: 'src/a.ts', line: 1, text: 'Foo is not foo' },
      { path: 'src/b.ts', line: 1, text: 'const foo = 1;' },
      { path: 'src/b.ts', line: 3, text: 'foo();' },
      { path: 'src/deep/c.ts', line: 1, text: 'foofoo' },
    ],
    files_scanned: 4,
    truncated: false,
  });
  // Within a directory, paths stay relative to the root, so they can be read back.
  const inSrc = await workspaceSearch(p, { pattern: 'foo', path: 'src' });
  assert.deepEqual(
    inSrc.matches.map((m) => m.path),
    ['src/a.ts', 'src/b.ts', 'src/b.ts', 'src/d.js', 'src/deep/c.ts'],
  );
  assert.equal((await workspaceRead(p, { path: inSrc.matches[3].path })).content, 'foo\n');
  assert.deepEqual((await workspaceSearch(p, { pattern: 'a.c' })).matches, [{ path: 'src/regex.ts', line: 2, text: 'a.c' }]);
  assert.deepEqual((await workspaceSearch(p, { pattern: 'foo', path: 'docs/e.md' })).matches, [{ path: 'docs/e.md', line: 1, text: 'foo' }]);
  assert.equal((await workspaceSearch(p, { pattern: 'foo', glob: '**/*.{js,md}' })).matches.length, 2);
});

test('search: at most `limit` matches, 100 by default and 500 at most', async () => {
  put('many.txt', 'hit\n'.repeat(1000));
  const p = profile();
  const byDefault = await workspaceSearch(p, { pattern: 'hit' });
  assert.deepEqual([byDefault.matches.length, byDefault.truncated], [100, true]);
  const capped = await workspaceSearch(p, { pattern: 'hit', limit: 10_000 });
  assert.deepEqual([capped.matches.length, capped.truncated, capped.matches.at(-1)!.line], [500, true, 500]);
  assert.equal((await workspaceSearch(p, { pattern: 'hit', limit: 5 })).matches.length, 5);
  const exact = await workspaceSearch(p, { pattern: 'hit', path: 'many.txt', limit: 500 });
  assert.equal(exact.truncated, true);
  put('few.txt', 'hit\nhit\n');
  assert.equal((await workspaceSearch(p, { pattern: 'hit', path: 'few.txt', limit: 2 })).truncated, false);
  await refused(workspaceSearch(p, { pattern: 'hit', limit: 0 }), WorkspaceFailed, /limit/);
  await refused(workspaceSearch(p, { pattern: '' }), WorkspaceFailed, /pattern/);
});

test('search: a catastrophic regular expression is only text, searched fast on a long line', async () => {
  put('long.txt', 'a'.repeat(200_000) + '\n' + 'a'.repeat(200_000));
  put('literal.txt', 'the regex (a+)+$ as text\n');
  const started = Date.now();
  const result = await workspaceSearch(profile(), { pattern: '(a+)+$' });
  assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
  assert.deepEqual(result.matches, [{ path: 'literal.txt', line: 1, text: 'the regex (a+)+$ as text' }]);
  // A match in a long line comes as 500 characters around it.
  const long = await workspaceSearch(profile(), { pattern: 'aaa', path: 'long.txt' });
  assert.deepEqual(
    long.matches.map((m) => [m.line, m.text.length]),
    [
      [1, 500],
      [2, 500],
    ],
  );
});

test('search: at most 10,000 files scanned, then truncated', async () => {
  const dir = join(root, 'many');
  mkdirSync(dir);
  // Hard links to one small file: 10,050 files to walk and read, without writing 10,050 files' data (seconds on some disks).
  const one = put('one.txt', 'x\n', outside);
  for (let i = 0; i < 10_050; i += 1) linkSync(one, join(dir, `f${String(i).padStart(5, '0')}.txt`));
  const result = await workspaceSearch(profile(), { pattern: 'needle' });
  assert.deepEqual(result, { matches: [], files_scanned: 10_000, truncated: true });
});

test('search: at most 64 KiB of results, each match text at most 500 characters', async () => {
  put('wide.txt', `${'w'.repeat(400)}\n`.repeat(400));
  const result = await workspaceSearch(profile(), { pattern: 'w', limit: 500 });
  assert.equal(result.truncated, true);
  const bytes = result.matches.reduce((sum, m) => sum + Buffer.byteLength(m.text) + Buffer.byteLength(m.path), 0);
  assert.ok(bytes <= 65_536 && bytes > 60_000, `${bytes} bytes`);
  assert.equal(result.matches.length, Math.floor(65_536 / 408));
});

test('search: binary and oversized files are skipped; a symlink out is skipped and a symlinked directory is not entered', async () => {
  put('text.txt', 'needle\n');
  put('binary.bin', Buffer.concat([Buffer.from('needle\n'), Buffer.from([0])]));
  put('big.txt', `needle\n${'x'.repeat(2000)}`);
  put('secret.txt', 'needle\n', outside);
  symlinkSync(join(outside, 'secret.txt'), join(root, 'link-out.txt'));
  symlinkSync(join(root, 'text.txt'), join(root, 'link-in.txt'));
  symlinkSync(outside, join(root, 'dir-out'));
  mkdirSync(join(root, 'sub'));
  put('sub/inner.txt', 'needle\n');
  symlinkSync(join(root, 'sub'), join(root, 'dir-in'));
  const result = await workspaceSearch(profile({ maxFileBytes: 1000 }), { pattern: 'needle' });
  assert.deepEqual(
    result.matches.map((m) => m.path),
    ['link-in.txt', 'sub/inner.txt', 'text.txt'],
  );
  assert.equal(result.files_scanned, 5);
});

test('search: a glob that could make matchesGlob run away is refused', async () => {
  put('a.txt', 'x\n');
  const p = profile();
  for (const glob of ['*a*a*a*c', '+(a|aa)', '{1..100000}', '{a,{b,c}}', `{${'a,'.repeat(20)}b}`, '**/**/**/**/x', 'x'.repeat(300)]) {
    await refused(workspaceSearch(p, { pattern: 'x', glob }), WorkspaceDenied);
  }
  assert.equal((await workspaceSearch(p, { pattern: 'x', glob: '*a*.txt' })).matches.length, 1);
});

// --- write

test('write: creating needs allowCreate and create: true', async () => {
  const result = await workspaceWrite(profile(), { path: 'new.txt', content: 'hi', create: true });
  assert.deepEqual(result, { path: 'new.txt', bytes: 2, created: true });
  assert.equal(read('new.txt'), 'hi');
  await refused(workspaceWrite(profile(), { path: 'other.txt', content: 'hi' }), WorkspaceFailed, /does not exist; pass create: true/);
  await refused(workspaceWrite(profile({ allowCreate: false }), { path: 'other.txt', content: 'hi', create: true }), WorkspaceDenied, /creating/);
  await refused(workspaceWrite(profile({ allowCreate: false }), { path: 'other.txt', content: 'hi' }), WorkspaceDenied);
  assert.equal(existsSync(join(root, 'other.txt')), false);
  // Directories are not made.
  await refused(workspaceWrite(profile(), { path: 'no/such/dir.txt', content: 'hi', create: true }), WorkspaceFailed, /directory/);
  assert.equal(existsSync(join(root, 'no')), false);
});

test('write: overwriting needs allowOverwrite, and keeps the mode', async () => {
  const path = put('old.txt', 'before');
  chmodSync(path, 0o640);
  await refused(workspaceWrite(profile({ allowOverwrite: false }), { path: 'old.txt', content: 'after' }), WorkspaceDenied, /overwriting/);
  assert.equal(read('old.txt'), 'before');
  assert.deepEqual(await workspaceWrite(profile(), { path: 'old.txt', content: 'after ✓' }), { path: 'old.txt', bytes: 9, created: false });
  assert.equal(read('old.txt'), 'after ✓');
  assert.equal(statSync(path).mode & 0o777, 0o640);
  mkdirSync(join(root, 'dir'));
  await refused(workspaceWrite(profile(), { path: 'dir', content: 'x' }), WorkspaceFailed, /not a regular file/);
  await refused(workspaceWrite(profile(), { path: '.', content: 'x' }), WorkspaceFailed);
});

test('write: only inside a writable root, even where it may read', async () => {
  put('readme.txt', 'ro');
  const readOnly = profile({ writableRoots: [] });
  await refused(workspaceWrite(readOnly, { path: 'readme.txt', content: 'x' }), WorkspaceDenied, /writable/);
  const writable = join(outside, 'rw');
  mkdirSync(writable);
  // A path is resolved against the writable roots only: this creates the file there, the readable one is untouched.
  await workspaceWrite(profile({ writableRoots: [writable] }), { path: 'readme.txt', content: 'rw', create: true });
  assert.deepEqual([read('readme.txt'), readFileSync(join(writable, 'readme.txt'), 'utf8')], ['ro', 'rw']);
});

test('write: content over 256 KiB or over maxFileBytes is refused, counted in UTF-8 bytes', async () => {
  put('f.txt', 'same');
  await refused(workspaceWrite(profile(), { path: 'f.txt', content: 'x'.repeat(262_145) }), WorkspaceDenied, /262145 bytes.*262144/);
  await refused(workspaceWrite(profile(), { path: 'f.txt', content: 'é'.repeat(131_073) }), WorkspaceDenied, /262146 bytes/);
  await refused(workspaceWrite(profile({ maxFileBytes: 10 }), { path: 'f.txt', content: 'x'.repeat(11) }), WorkspaceDenied, /limit of 10/);
  assert.equal(read('f.txt'), 'same');
  assert.equal((await workspaceWrite(profile(), { path: 'f.txt', content: 'x'.repeat(262_144) })).bytes, 262_144);
});

test('write: no temporary file is left behind, whether the write succeeds, is refused or fails at the rename', async () => {
  put('f.txt', 'same');
  await workspaceWrite(profile(), { path: 'f.txt', content: 'new' });
  await refused(workspaceWrite(profile({ allowOverwrite: false }), { path: 'f.txt', content: 'x' }), WorkspaceDenied);
  await refused(workspaceWrite(profile(), { path: 'f.txt', content: 'x'.repeat(300_000) }), WorkspaceDenied);
  assert.deepEqual(temporaries(root), []);
  // A rename that fails (a non-empty directory where the file goes) removes its temporary file.
  put('taken/inside.txt', 'x');
  await assert.rejects(replaceFile(join(root, 'taken'), Buffer.from('content')));
  assert.deepEqual(temporaries(root), []);
  assert.deepEqual(readdirSync(root).sort(), ['f.txt', 'taken']);
});

// --- patch

test('patch: two files changed together, with a "no newline at end of file" marker', async () => {
  put('a.txt', 'one\ntwo\nthree\n');
  put('b.txt', 'alpha\nbeta');
  const patch = [
    'diff --git a/a.txt b/a.txt',
    'index 111..222 100644',
    '--- a/a.txt',
    '+++ b/a.txt',
    '@@ -1,3 +1,3 @@',
    ' one',
    '-two',
    '+TWO',
    ' three',
    'diff --git a/b.txt b/b.txt',
    '--- a/b.txt\t2024-01-01 00:00:00',
    '+++ b/b.txt\t2024-01-01 00:00:00',
    '@@ -1,2 +1,2 @@',
    ' alpha',
    '-beta',
    '\\ No newline at end of file',
    '+beta',
    '',
  ].join('\n');
  assert.deepEqual(await workspacePatch(profile(), { patch }), {
    files: [
      { path: 'a.txt', created: false, deleted: false, hunks: 1 },
      { path: 'b.txt', created: false, deleted: false, hunks: 1 },
    ],
  });
  assert.deepEqual([read('a.txt'), read('b.txt')], ['one\nTWO\nthree\n', 'alpha\nbeta\n']);
  assert.deepEqual(temporaries(root), []);
});

test('patch: a hunk that fails in the second file changes neither file', async () => {
  const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
  put('a.txt', `${lines.join('\n')}\n`);
  put('b.txt', `${lines.join('\n')}\n`);
  const before = [readFileSync(join(root, 'a.txt')), readFileSync(join(root, 'b.txt'))];
  const patch = [
    '--- a/a.txt',
    '+++ b/a.txt',
    '@@ -2,1 +2,1 @@',
    '-line 2',
    '+LINE 2',
    '--- a/b.txt',
    '+++ b/b.txt',
    '@@ -2,1 +2,1 @@',
    '-line 2',
    '+LINE 2',
    '@@ -15,1 +15,1 @@',
    '-not what is there',
    '+x',
    '',
  ].join('\n');
  await refused(workspacePatch(profile(), { patch }), WorkspaceFailed, /hunk 2 of "b\.txt" does not apply/);
  assert.deepEqual([readFileSync(join(root, 'a.txt')), readFileSync(join(root, 'b.txt'))], before);
  assert.deepEqual(temporaries(root), []);
});

test('patch: creating and deleting files', async () => {
  put('gone.txt', 'bye\n');
  const patch = [
    '--- /dev/null',
    '+++ b/src/new.txt',
    '@@ -0,0 +1,2 @@',
    '+hello',
    '+world',
    '\\ No newline at end of file',
    '--- a/gone.txt',
    '+++ /dev/null',
    '@@ -1 +0,0 @@',
    '-bye',
    '',
  ].join('\n');
  mkdirSync(join(root, 'src'));
  assert.deepEqual(await workspacePatch(profile(), { patch }), {
    files: [
      { path: 'src/new.txt', created: true, deleted: false, hunks: 1 },
      { path: 'gone.txt', created: false, deleted: true, hunks: 1 },
    ],
  });
  assert.equal(read('src/new.txt'), 'hello\nworld');
  assert.equal(existsSync(join(root, 'gone.txt')), false);
  // Creating what is there, or deleting only part of a file, fails.
  await refused(
    workspacePatch(profile(), { patch: wholeFileDiff('src/new.txt', [], ['x']).replace('--- a/src/new.txt', '--- /dev/null') }),
    WorkspaceFailed,
    /already exists/,
  );
  put('keep.txt', 'a\nb\n');
  await refused(workspacePatch(profile(), { patch: '--- a/keep.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n' }), WorkspaceFailed, /do not remove all/);
  assert.equal(read('keep.txt'), 'a\nb\n');
});

test('patch: several hunks in one file, an insertion without context, and bytes that are not UTF-8 kept as they are', async () => {
  const path = put('a.txt', Buffer.concat([Buffer.from('1\n2\n3\n4\n5\n6\n7\n8\n9\n'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])]));
  const patch = ['--- a/a.txt', '+++ b/a.txt', '@@ -1,2 +1,2 @@', '-1', '+one', ' 2', '@@ -5,0 +6,2 @@', '+5a', '+5b', '@@ -8 +10 @@', '-8', '+eight', ''].join(
    '\n',
  );
  assert.deepEqual((await workspacePatch(profile(), { patch })).files, [{ path: 'a.txt', created: false, deleted: false, hunks: 3 }]);
  assert.deepEqual(readFileSync(path), Buffer.concat([Buffer.from('one\n2\n3\n4\n5\n5a\n5b\n6\n7\neight\n9\n'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])]));
});

test('patch: creating needs allowCreate, changing and deleting need allowOverwrite', async () => {
  put('a.txt', 'a\n');
  const create = '--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n';
  await refused(workspacePatch(profile({ allowCreate: false }), { patch: create }), WorkspaceDenied, /creating/);
  await refused(workspacePatch(profile({ allowOverwrite: false }), { patch: wholeFileDiff('a.txt', ['a'], ['b']) }), WorkspaceDenied, /changing/);
  await refused(workspacePatch(profile({ allowOverwrite: false }), { patch: '--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n' }), WorkspaceDenied);
  await refused(workspacePatch(profile({ writableRoots: [] }), { patch: wholeFileDiff('a.txt', ['a'], ['b']) }), WorkspaceDenied, /writable/);
  await refused(workspacePatch(profile(), { patch: wholeFileDiff('missing.txt', ['a'], ['b']) }), WorkspaceFailed, /does not exist/);
  assert.deepEqual([read('a.txt'), existsSync(join(root, 'n.txt'))], ['a\n', false]);
});

test('patch: overlapping hunks, two sections for one file and malformed patches are refused', async () => {
  put('a.txt', '1\n2\n3\n4\n5\n');
  const p = profile();
  const overlapping = '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n@@ -2,2 +2,2 @@\n 2\n-3\n+three\n';
  await refused(workspacePatch(p, { patch: overlapping }), WorkspaceFailed, /hunk 2 of "a\.txt" overlaps/);
  const twice = wholeFileDiff('a.txt', ['1', '2', '3', '4', '5'], ['x']) + wholeFileDiff('./a.txt', ['1', '2', '3', '4', '5'], ['y']);
  await refused(workspacePatch(p, { patch: twice }), WorkspaceFailed, /two sections/);
  await refused(workspacePatch(p, { patch: 'just some text\n' }), WorkspaceFailed, /no file sections/);
  await refused(workspacePatch(p, { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n 1\n-2\n' }), WorkspaceFailed, /ends before/);
  await refused(workspacePatch(p, { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-1\n+one\n+extra\n' }), WorkspaceFailed, /outside any hunk/);
  await refused(workspacePatch(p, { patch: '--- a/a.txt\n+++ b/a.txt\n@@ bad @@\n' }), WorkspaceFailed, /malformed/);
  await refused(workspacePatch(p, { patch: '--- a/a.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-1\n+2\n' }), WorkspaceFailed, /renames/);
  assert.equal(read('a.txt'), '1\n2\n3\n4\n5\n');
});

test('patch: a hunk may be found up to 3 lines from its stated line, never further, and never with other content', async () => {
  const lines = Array.from({ length: 20 }, (_, i) => `l${i + 1}`);
  put('a.txt', `${lines.join('\n')}\n`);
  const hunk = (start: number) => `--- a/a.txt\n+++ b/a.txt\n@@ -${start},1 +${start},1 @@\n-l10\n+L10\n`;
  await refused(workspacePatch(profile(), { patch: hunk(14) }), WorkspaceFailed, /does not apply at line 14/);
  await workspacePatch(profile(), { patch: hunk(13) });
  assert.equal(read('a.txt').split('\n')[9], 'L10');
  await refused(workspacePatch(profile(), { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-l1 \n+x\n' }), WorkspaceFailed, /hunk 1/);
});

test('patch: over 256 KiB, over 32 files or a result over maxFileBytes is refused', async () => {
  put('a.txt', 'a\n');
  const p = profile();
  await refused(workspacePatch(p, { patch: `--- a/a.txt\n+++ b/a.txt\n${'#'.repeat(262_144)}` }), WorkspaceDenied, /262144/);
  const many = Array.from({ length: 33 }, (_, i) => `--- /dev/null\n+++ b/f${i}.txt\n@@ -0,0 +1 @@\n+x\n`).join('');
  await refused(workspacePatch(p, { patch: many }), WorkspaceDenied, /33 files/);
  await refused(workspacePatch(profile({ maxFileBytes: 5 }), { patch: wholeFileDiff('a.txt', ['a'], ['abcdef']) }), WorkspaceDenied, /limit of 5/);
  assert.deepEqual(readdirSync(root), ['a.txt']);
});

test('patch: when a rename fails midway, the files already written get their content back', async () => {
  const first = put('first.txt', 'original\n');
  put('second/inside.txt', 'x');
  const changes = [
    { real: first, shown: '"first.txt"', original: Buffer.from('original\n'), next: Buffer.from('changed\n'), mode: 0o644 },
    { real: join(root, 'created.txt'), shown: '"created.txt"', original: null, next: Buffer.from('new\n') },
    { real: join(root, 'second'), shown: '"second"', original: Buffer.from('y'), next: Buffer.from('z') },
  ];
  await refused(commitChanges(changes), WorkspaceFailed, /could not write "second"; the files changed before it were restored/);
  assert.equal(read('first.txt'), 'original\n');
  assert.equal(existsSync(join(root, 'created.txt')), false);
  assert.deepEqual(temporaries(root), []);
});

// --- paths

const BAD_PATHS = ['../x', 'a/../../x', 'a/..', '/etc/passwd', 'C:\\x', 'C:/x', '\\\\host\\share\\x', 'a\\b', 'a\u0000b', 'x'.repeat(5000), ''];

test('paths: absolute, drive, UNC, backslash, NUL, `..`, empty and over-long paths are refused by every operation', async () => {
  put('x', 'inside');
  const p = profile();
  // An absolute path into the root itself is refused too, and not echoed.
  for (const path of [...BAD_PATHS, join(root, 'x')]) {
    await refused(workspaceRead(p, { path }), WorkspaceDenied);
    await refused(workspaceWrite(p, { path, content: 'x', create: true }), WorkspaceDenied);
    await refused(workspaceSearch(p, { pattern: 'x', path }), WorkspaceDenied);
    if (path !== '' && !path.includes('\u0000')) {
      await refused(workspacePatch(p, { patch: `--- /dev/null\n+++ ${path}\n@@ -0,0 +1 @@\n+x\n` }), WorkspaceDenied);
    }
  }
  await refused(workspacePatch(p, { patch: '--- /dev/null\n+++ b/a\u0000b\n@@ -0,0 +1 @@\n+x\n' }), WorkspaceDenied, /NUL/);
  await refused(workspacePatch(p, { patch: '--- a//etc/passwd\n+++ b//etc/passwd\n@@ -1 +1 @@\n-x\n+y\n' }), WorkspaceDenied, /absolute/);
  // Refused before the hunks are parsed, so a malformed hunk cannot echo the path either.
  await refused(workspacePatch(p, { patch: `--- ${join(root, 'x')}\n+++ ${join(root, 'x')}\n@@ bad\n` }), WorkspaceDenied, /absolute/);
  const long = await refused(workspaceRead(p, { path: 'x'.repeat(5000) }), WorkspaceDenied, /4096 bytes/);
  assert.ok(long.message.length < 300);
  assert.equal(read('x'), 'inside');
});

test('paths: a symlink inside the root to a file outside is refused for read, write and patch', async () => {
  const secret = put('secret.txt', 'secret\n', outside);
  symlinkSync(secret, join(root, 'link.txt'));
  const p = profile();
  await refused(workspaceRead(p, { path: 'link.txt' }), WorkspaceDenied, /"link\.txt" leads outside/);
  await refused(workspaceWrite(p, { path: 'link.txt', content: 'pwned' }), WorkspaceDenied, /leads outside/);
  await refused(workspacePatch(p, { patch: wholeFileDiff('link.txt', ['secret'], ['pwned']) }), WorkspaceDenied, /leads outside/);
  await refused(workspaceSearch(p, { pattern: 'secret', path: 'link.txt' }), WorkspaceDenied);
  assert.equal(readFileSync(secret, 'utf8'), 'secret\n');
  assert.deepEqual(readdirSync(outside), ['secret.txt']);
});

test('paths: a symlinked directory inside the root that points outside is refused, for files there and files not yet there', async () => {
  put('secret.txt', 'secret\n', outside);
  symlinkSync(outside, join(root, 'out'));
  const p = profile();
  await refused(workspaceRead(p, { path: 'out/secret.txt' }), WorkspaceDenied, /leads outside/);
  await refused(workspaceSearch(p, { pattern: 'secret', path: 'out' }), WorkspaceDenied);
  await refused(workspaceWrite(p, { path: 'out/secret.txt', content: 'pwned' }), WorkspaceDenied);
  await refused(workspaceWrite(p, { path: 'out/new.txt', content: 'pwned', create: true }), WorkspaceDenied, /leads outside/);
  await refused(workspacePatch(p, { patch: '--- /dev/null\n+++ b/out/new.txt\n@@ -0,0 +1 @@\n+pwned\n' }), WorkspaceDenied);
  assert.deepEqual(readdirSync(outside), ['secret.txt']);
  assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'secret\n');
});

test('paths: symlinks that stay inside the roots are followed; one that leads nowhere is refused', async () => {
  put('real/file.txt', 'content\n');
  symlinkSync(join(root, 'real'), join(root, 'alias'));
  symlinkSync(join(root, 'real', 'file.txt'), join(root, 'file-link.txt'));
  symlinkSync(join(outside, 'nothing.txt'), join(root, 'dangling.txt'));
  const p = profile();
  assert.equal((await workspaceRead(p, { path: 'alias/file.txt' })).content, 'content\n');
  await workspaceWrite(p, { path: 'file-link.txt', content: 'through\n' });
  assert.equal(read('real/file.txt'), 'through\n');
  await refused(workspaceWrite(p, { path: 'dangling.txt', content: 'x', create: true }), WorkspaceDenied, /leads nowhere/);
  assert.equal(existsSync(join(outside, 'nothing.txt')), false);
});

test('paths: containment is by path.relative, not by a prefix', () => {
  assert.equal(within('/srv/root', '/srv/root'), true);
  assert.equal(within('/srv/root', '/srv/root/a/b'), true);
  assert.equal(within('/srv/root', '/srv/root/..hidden'), true);
  assert.equal(within('/srv/root', '/srv/rootless/a'), false);
  assert.equal(within('/srv/root', '/srv'), false);
  assert.equal(within('/srv/root', '/etc/passwd'), false);
});
