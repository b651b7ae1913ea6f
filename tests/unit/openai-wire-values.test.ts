// The small pure pieces both OpenAI adapters share: retry-after parsing, secret
// scrubbing of provider messages, and the output-format name OpenAI accepts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { outputFormatName, toolArguments } from '../../adapters/models/shared/openai-client.js';
import { cleanCause, redactSecrets, retryAfterMs } from '../../adapters/models/shared/openai-errors.js';

test('retry-after-ms is taken as is and wins over retry-after', () => {
  assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '1500.4', 'retry-after': '9' })), 1500);
});

test('retry-after in seconds (whole or fractional) becomes milliseconds', () => {
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '20' })), 20_000);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '0.5' })), 500);
});

test('retry-after as an HTTP date is the time left until then, never negative', () => {
  const inTenSeconds = retryAfterMs(new Headers({ 'retry-after': new Date(Date.now() + 10_000).toUTCString() }))!;
  assert.ok(inTenSeconds > 8_000 && inTenSeconds <= 10_000, String(inTenSeconds));
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' })), 0);
});

test('missing or unreadable retry headers give undefined', () => {
  assert.equal(retryAfterMs(undefined), undefined);
  assert.equal(retryAfterMs(new Headers()), undefined);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' })), undefined);
});

test('the key, bearer tokens and masked sk- keys are scrubbed from provider text', () => {
  const key = 'gsk_live_0123456789abcdef';
  assert.equal(redactSecrets(`bad key ${key}!`, key), 'bad key [redacted]!');
  assert.equal(redactSecrets('sent Authorization: Bearer abc.def', null), 'sent Authorization: Bearer [redacted]');
  assert.equal(redactSecrets('Incorrect API key provided: sk-proj-********************abcd.', null), 'Incorrect API key provided: [redacted].');
  assert.equal(redactSecrets('ask-me-anything and desk-lamp stay', null), 'ask-me-anything and desk-lamp stay');
});

test('causes are flattened to one line and cut short', () => {
  assert.equal(cleanCause('line one\n\n  line two', null), 'line one line two');
  const long = cleanCause('x'.repeat(1000), null);
  assert.equal(long.length, 300);
  assert.ok(long.endsWith('…'));
});

test("the output format's name comes from the schema title, made valid, else 'output'", () => {
  assert.equal(outputFormatName({ title: 'Weather report (v2)' }), 'Weather_report_v2');
  assert.equal(outputFormatName({ title: '***' }), 'output');
  assert.equal(outputFormatName({ type: 'object' }), 'output');
  assert.equal(outputFormatName({ title: 'a'.repeat(100) }).length, 64);
});

test("a call's empty arguments become an empty JSON object", () => {
  assert.equal(toolArguments(''), '{}');
  assert.equal(toolArguments(null), '{}');
  assert.equal(toolArguments('{"a":1}'), '{"a":1}');
});
