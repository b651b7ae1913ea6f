// Ids: a prefix plus a time-ordered body, so sorting ids sorts by creation and
// a cursor is just the last id seen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId, type IdPrefix } from '../../core/ids.js';

const PREFIXES: IdPrefix[] = ['proj', 'key', 'agt', 'agtrev', 'ses', 'item', 'resp', 'msg', 'fc', 'call'];
const CROCKFORD_BODY = /^[0-9a-hjkmnp-tv-z]{26}$/;

test('every id is its prefix, an underscore and a 26-character Crockford base32 body', () => {
  for (const prefix of PREFIXES) {
    const id = newId(prefix);
    assert.ok(id.startsWith(`${prefix}_`), id);
    assert.match(id.slice(prefix.length + 1), CROCKFORD_BODY);
  }
});

test('the body starts with the creation time in milliseconds', () => {
  const now = Date.UTC(2030, 0, 2, 3, 4, 5, 678);
  const body = newId('resp', now).slice('resp_'.length);
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  const decoded = [...body.slice(0, 10)].reduce((value, ch) => value * 32 + alphabet.indexOf(ch), 0);
  assert.equal(decoded, now);
});

test('ids minted later sort after ids minted earlier', () => {
  const start = Date.UTC(2024, 5, 1);
  const ids = [0, 1, 2, 1000, 60_000, 86_400_000, 10 * 365 * 86_400_000].map((offset) => newId('agt', start + offset));
  assert.deepEqual([...ids].sort(), ids);
});

test('ids minted in the same millisecond still sort in minting order', () => {
  const now = Date.now();
  const ids = Array.from({ length: 1000 }, () => newId('msg', now));
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
});

test('ids minted back to back with the real clock sort in minting order and never repeat', () => {
  const ids = Array.from({ length: 20_000 }, () => newId('item'));
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
});

const randomPart = (id: string): bigint => [...id.slice(-16)].reduce((value, ch) => value * 32n + BigInt('0123456789abcdefghjkmnpqrstvwxyz'.indexOf(ch)), 0n);

test('a new millisecond starts a fresh random part instead of counting on', () => {
  const a = newId('ses', 1_700_000_000_000);
  const b = newId('ses', 1_700_000_000_001);
  assert.notEqual(randomPart(b) - randomPart(a), 1n);
  const c = newId('ses', 1_700_000_000_001);
  assert.equal(randomPart(c) - randomPart(b), 1n, 'within the millisecond it counts on');
});
