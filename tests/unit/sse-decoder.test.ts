// The adapters' server-sent event decoder reads a stream as the OpenAI SDK's own
// decoder does, however the bytes are cut into chunks: each case is decoded by
// both, whole and in random cuts, and the events must be the same.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { _iterSSEMessages } from 'openai/core/streaming';
import { SseDecoder, type ServerSentEvent } from '../../adapters/models/shared/sse-decoder.js';

const CASES: Record<string, string> = {
  'data lines, \\n endings': 'data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n',
  'event names and data joined over lines': 'event: response.created\ndata: one\ndata: two\n\nevent: error\ndata: {"message":"x"}\n\n',
  '\\r\\n and lone \\r endings': 'data: a\r\n\r\ndata: b\r\rdata:c\r\n\r\n',
  'comments, other fields, no space after the colon': ': keep-alive\nid: 7\nretry: 100\ndata:tight\n\n:\n\n',
  'a last event with no blank line after it': 'data: first\n\ndata: last',
  'a field without a colon, and empty data': 'data\n\ndata:\n\nevent\ndata: x\n\n',
  'text beyond ASCII': 'data: {"t":"été — 東京 🚀"}\n\n',
};

async function sdkEvents(text: string): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const { event, data } of _iterSSEMessages(new Response(text), new AbortController())) events.push({ event, data });
  return events;
}

function decoded(bytes: Uint8Array, cuts: number[]): ServerSentEvent[] {
  const text = new TextDecoder();
  const sse = new SseDecoder();
  const events: ServerSentEvent[] = [];
  let start = 0;
  for (const end of [...cuts, bytes.length]) {
    events.push(...sse.decode(text.decode(bytes.subarray(start, end), { stream: true })));
    start = end;
  }
  events.push(...sse.decode(text.decode()), ...sse.flush());
  return events;
}

/** A seeded generator, so a failure repeats. */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

for (const [name, text] of Object.entries(CASES)) {
  test(`${name}: the SDK's events, whole and in any cut`, async () => {
    const expected = await sdkEvents(text);
    assert.ok(expected.length > 0);
    const bytes = new TextEncoder().encode(text);
    assert.deepEqual(decoded(bytes, []), expected);
    // Every single cut, then random sets of cuts (inside multi-byte characters and \r\n too).
    for (let at = 1; at < bytes.length; at++) assert.deepEqual(decoded(bytes, [at]), expected, `cut at byte ${at}`);
    const next = random(bytes.length);
    for (let round = 0; round < 50; round++) {
      const cuts = [...new Set(Array.from({ length: 1 + Math.floor(next() * 6) }, () => 1 + Math.floor(next() * (bytes.length - 1))))].sort((a, b) => a - b);
      assert.deepEqual(decoded(bytes, cuts), expected, `cuts at ${cuts.join(', ')}`);
    }
  });
}
