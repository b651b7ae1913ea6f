// The fake model's echo is bounded: at most ECHO_MAX_WORDS words and the cut
// mark, so a 1 MB input is one stored input item and a couple of hundred
// journal events, not one event per word.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ECHO_CUT_MARK, ECHO_MAX_WORDS, echoWords, splitWords } from '../../adapters/models/fake/fake-model.js';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { parseSse } from '../support/sse.js';

const wordsText = (count: number) => Array.from({ length: count }, (_, i) => `w${i}`).join(' ');

/** About 1 MB of distinct words, so the echo's cut point is visible. */
function megabyteOfWords(): string {
  const words: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < 1_000_000; i++) {
    words.push(`word${i}`);
    bytes += `word${i}`.length + 1;
  }
  return words.join(' ');
}

test('a message of at most ECHO_MAX_WORDS words is echoed whole, trailing whitespace included', () => {
  for (const text of ['', 'one', `${wordsText(ECHO_MAX_WORDS)}  `, `\n${wordsText(ECHO_MAX_WORDS)}`]) {
    assert.deepEqual(echoWords(text), splitWords(text), JSON.stringify(text.slice(0, 20)));
  }
});

test('a longer message is echoed as its first ECHO_MAX_WORDS words and the cut mark', () => {
  const deltas = echoWords(wordsText(ECHO_MAX_WORDS + 1));
  assert.equal(deltas.length, ECHO_MAX_WORDS + 1);
  assert.equal(deltas.join(''), `${wordsText(ECHO_MAX_WORDS)}${ECHO_CUT_MARK}`);
});

await describeEachStore('fake model with a 1 MB input', (ctx) => {
  test('the answer is the bounded echo, the input one item, and the journal a couple of hundred events', async () => {
    const { http, auth } = ctx();
    await createAgent(ctx, { name: 'echo', model: { provider: 'fake' } });
    const input = megabyteOfWords();
    const expected = `${splitWords(input).slice(0, ECHO_MAX_WORDS).join('')}${ECHO_CUT_MARK}`;

    const response = await respond(ctx, { model: 'echo', input });
    assert.equal(response.status, 'completed');
    assert.equal(response.output_text, expected);

    const items = await http.get(`/v1/responses/${response.id}/input_items`).set(auth);
    assert.equal(items.status, 200, items.text);
    assert.equal(items.body.data.length, 1);
    assert.equal(items.body.data[0].content[0].text, input, 'the input is stored whole');

    const events = await http.get(`/v1/responses/${response.id}/events`).set(auth);
    assert.equal(events.status, 200, events.text);
    const frames = parseSse(events.text);
    const deltas = frames.filter((f) => f.data.type === 'response.output_text.delta').map((f) => f.data.delta);
    assert.equal(deltas.join(''), expected);
    // The echo's deltas and a handful of lifecycle events, whatever the input's size.
    assert.ok(frames.length <= ECHO_MAX_WORDS + 1 + 16, `${frames.length} journal events`);
  });
});
