// The companion's marking of secret values in a command's output: every
// occurrence, a longer value before one it holds, and the start of a value
// where the output was cut at its limit; the hub's pattern finds each marker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { markSecrets, SECRET_MARKERS, secretMarker } from '../../core/surfaces/nodes/wire/secret-marker.js';

const inv = 'ninv_01jz0000000000000000000000';

test('every occurrence of each value becomes its marker, longer values first', () => {
  const marked = markSecrets('a=s3cr3t-long b=s3cr3t c=s3cr3t-long', { SHORT: 's3cr3t', LONG: 's3cr3t-long' }, inv);
  assert.equal(marked, `a=${secretMarker('LONG', inv)} b=${secretMarker('SHORT', inv)} c=${secretMarker('LONG', inv)}`);
  assert.deepEqual(
    [...marked.matchAll(SECRET_MARKERS)].map((m) => [m[1], m[2]]),
    [
      ['LONG', inv],
      ['SHORT', inv],
      ['LONG', inv],
    ],
  );
});

test('output cut inside a value loses its start too, and only when it was cut', () => {
  const value = 'ghp_0123456789abcdef';
  assert.equal(markSecrets(`x ${value.slice(0, 12)}`, { T: value }, inv, true), `x ${secretMarker('T', inv)}`);
  assert.equal(markSecrets(`x ${value.slice(0, 12)}`, { T: value }, inv, false), `x ${value.slice(0, 12)}`);
  // Fewer than eight characters of a long value at the end are not taken for it.
  assert.equal(markSecrets('x ghp_0', { T: value }, inv, true), 'x ghp_0');
});

test('text without the values is unchanged', () => {
  assert.equal(markSecrets('nothing here', { T: 'absent-value' }, inv, true), 'nothing here');
  assert.equal(markSecrets('nothing here', {}, inv, true), 'nothing here');
});
