// The companion's reconnect waits: about 1 s, doubling to 30 s, jittered, and
// back to 1 s once a connection was admitted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Backoff, BACKOFF_MAX_MS } from '../../adapters/nodes/companion/backoff.js';

test('waits double from about 1 s and stop at 30 s', () => {
  const middle = new Backoff(() => 0.5);
  assert.deepEqual(
    Array.from({ length: 8 }, () => middle.next()),
    [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000],
  );
});

test('jitter keeps each wait within ±25 % of its step, never over 30 s plus its jitter', () => {
  const low = new Backoff(() => 0);
  const high = new Backoff(() => 0.999999);
  assert.deepEqual([low.next(), low.next()], [750, 1500]);
  assert.deepEqual([high.next(), high.next()], [1250, 2500]);
  for (let i = 0; i < 20; i++) assert.ok(high.next() <= BACKOFF_MAX_MS * 1.25);
});

test('an admitted connection starts the waits over', () => {
  const backoff = new Backoff(() => 0.5);
  for (let i = 0; i < 5; i++) backoff.next();
  backoff.reset();
  assert.equal(backoff.next(), 1000);
});
