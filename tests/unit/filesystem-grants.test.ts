// Which filesystem grants cover a node call: a whole profile, or parts of one
// that every path the call names lies in (the node then confines the call to
// those parts); what no grant covers: a path that could leave the profile as
// written, a call whose paths are not known under a part, a read grant for a
// consequential call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filesystemCoverage, granted } from '../../core/surfaces/autonomy/grants.js';

const grant = (locator: string, access_mode = 'read') => ({ type: 'filesystem', locator, access_mode });
const target = (locator: string, paths?: string[]) => ({ type: 'filesystem' as const, locator, ...(paths ? { paths } : {}) });

test('a whole profile covers every path in it, unconfined; a part only the paths inside it, confined to it', () => {
  assert.deepEqual(filesystemCoverage(target('box/repo', ['src/a.ts']), true, [grant('box/repo')]), { confinedTo: null });
  assert.deepEqual(filesystemCoverage(target('box/repo', ['src/a.ts']), true, [grant('box/*')]), { confinedTo: null });
  assert.deepEqual(filesystemCoverage(target('box/repo', ['src/a.ts', './src//b.ts']), true, [grant('box/repo/src')]), { confinedTo: ['src'] });
  assert.deepEqual(filesystemCoverage(target('box/repo', ['src/a.ts', 'docs/x.md']), true, [grant('box/repo/src'), grant('box/repo/docs')]), {
    confinedTo: ['docs', 'src'],
  });
  // The whole profile wins over a part: nothing to confine.
  assert.deepEqual(filesystemCoverage(target('box/repo', ['src/a.ts']), true, [grant('box/repo/src'), grant('box/repo')]), { confinedTo: null });
});

test('a path beside the part, the profile itself, a name that only starts like the part: not covered', () => {
  const part = [grant('box/repo/src')];
  assert.equal(filesystemCoverage(target('box/repo', ['lib/a.ts']), true, part), null);
  assert.equal(filesystemCoverage(target('box/repo', ['.']), true, part), null);
  assert.equal(filesystemCoverage(target('box/repo', ['srcx/a.ts']), true, part), null);
  assert.equal(filesystemCoverage(target('box/repo', ['src/a.ts', 'lib/b.ts']), true, part), null);
  assert.equal(filesystemCoverage(target('box/docs', ['src/a.ts']), true, part), null, 'another profile');
  // Paths unknown (an exec command in a scope): only the whole covers.
  assert.equal(filesystemCoverage(target('box/repo'), true, part), null);
  assert.deepEqual(filesystemCoverage(target('box/repo'), true, [grant('box/repo')]), { confinedTo: null });
});

test('a path that could leave the profile as written is covered by no grant, not even the whole profile', () => {
  for (const path of ['src/../../etc/passwd', '../x', '/etc/passwd', 'C:/x', 'src\\\\a', 'a\u0000b']) {
    assert.equal(filesystemCoverage(target('box/repo', [path]), true, [grant('box/repo'), grant('box/*')]), null, path);
    assert.equal(granted(target('box/repo', [path]), true, [grant('box/repo')]), false, path);
  }
});

test('a read grant covers observe calls only', () => {
  assert.equal(filesystemCoverage(target('box/repo', ['src/a.ts']), false, [grant('box/repo/src', 'read')]), null);
  assert.deepEqual(filesystemCoverage(target('box/repo', ['src/a.ts']), false, [grant('box/repo/src', 'write')]), { confinedTo: ['src'] });
});
