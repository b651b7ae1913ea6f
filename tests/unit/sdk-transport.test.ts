// The SDK's transport pieces on their own: the SSE reader over chunks cut
// anywhere, Retry-After, and which answers the retrying fetch sends again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PalaiConnectionError } from '../../sdk/src/errors.js';
import { retryAfterMs, retryingFetch } from '../../sdk/src/retry.js';
import { readSse, type SseFrame } from '../../sdk/src/sse.js';

function bodyOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function frames(chunks: string[]): Promise<SseFrame[]> {
  const out: SseFrame[] = [];
  for await (const frame of readSse(bodyOf(chunks))) out.push(frame);
  return out;
}

test('SSE frames are read whatever the chunking: LF, CRLF and CR line ends, multi-line data, comments', async () => {
  const text = ': a comment\nid: 1\nevent: a\ndata: {"x":1}\n\nid: 2\r\nevent: b\r\ndata: one\r\ndata: two\r\n\r\ndata:no space\r\rretry: 5\nunknown: x\n\n';
  const expected = [
    { event: 'a', data: '{"x":1}', id: '1' },
    { event: 'b', data: 'one\ntwo', id: '2' },
    { event: 'message', data: 'no space', id: '2' },
  ];
  assert.deepEqual(await frames([text]), expected);
  // Every split point, including between the CR and LF of a CRLF.
  for (let i = 1; i < text.length; i++) assert.deepEqual(await frames([text.slice(0, i), text.slice(i)]), expected, `split at ${i}`);
  // A multi-byte character cut between chunks.
  const bytes = new TextEncoder().encode('data: é\n\n');
  const cut = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes.slice(0, 7));
      controller.enqueue(bytes.slice(7));
      controller.close();
    },
  });
  const read: SseFrame[] = [];
  for await (const frame of readSse(cut)) read.push(frame);
  assert.equal(read[0].data, 'é');
});

test('a frame cut off before its blank line is not dispatched', async () => {
  assert.deepEqual(await frames(['data: whole\n\n', 'data: half']), [{ event: 'message', data: 'whole', id: undefined }]);
});

test('Retry-After in seconds or as a date; nothing or nonsense is undefined', () => {
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '2' })), 2000);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': new Date(10_000).toUTCString() }), 4000), 6000);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': new Date(0).toUTCString() }), 4000), 0);
  assert.equal(retryAfterMs(new Headers()), undefined);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' })), undefined);
});

const problem = (status: number, slug: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ type: `urn:palai:problem:${slug}`, title: slug, status }), {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
  });

/** A fetch answering from a list, recording each request's method and body. */
function scripted(answers: Array<Response | Error>) {
  const seen: Array<{ method: string; body: string; key: string | null }> = [];
  const fetchImpl = (async (input: Request) => {
    seen.push({ method: input.method, body: await input.text(), key: input.headers.get('idempotency-key') });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    if (next instanceof Error) throw next;
    return next;
  }) as unknown as typeof fetch;
  return { seen, fetchImpl };
}

const post = (key?: string) =>
  new Request('http://hub.test/v1/responses', { method: 'POST', body: '{"model":"a"}', headers: key ? { 'idempotency-key': key } : {} });
const fast = { baseDelayMs: 1, maxDelayMs: 5 };

test('outages that pass and 429 are sent again, with the same body and key; other answers are returned as they are', async () => {
  const { seen, fetchImpl } = scripted([problem(503, 'store-unavailable', { 'retry-after': '0' }), problem(429, 'rate-limited'), new Response('{}')]);
  const answer = await retryingFetch(fetchImpl, fast)(post('k1'));
  assert.equal(answer.status, 200);
  assert.deepEqual(
    seen.map((s) => [s.body, s.key]),
    Array(3).fill(['{"model":"a"}', 'k1']),
  );

  for (const final of [problem(503, 'internal'), problem(500, 'internal'), problem(400, 'validation-failed'), problem(409, 'invalid-state')]) {
    const once = scripted([final]);
    assert.equal((await retryingFetch(once.fetchImpl, fast)(post('k2'))).status, final.status);
    assert.equal(once.seen.length, 1, `${final.status} is not retried`);
  }
});

test('retries stop at maxRetries with the last answer; a connection failure becomes a PalaiConnectionError', async () => {
  const outage = scripted(Array.from({ length: 5 }, () => problem(503, 'shutting-down')));
  assert.equal((await retryingFetch(outage.fetchImpl, { ...fast, maxRetries: 2 })(post('k3'))).status, 503);
  assert.equal(outage.seen.length, 3);

  const refused = scripted([new TypeError('fetch failed'), new TypeError('fetch failed')]);
  await assert.rejects(retryingFetch(refused.fetchImpl, { ...fast, maxRetries: 1 })(post('k4')), PalaiConnectionError);
  assert.equal(refused.seen.length, 2);
});

test('a POST without an Idempotency-Key is never sent twice', async () => {
  const { seen, fetchImpl } = scripted([problem(503, 'store-unavailable'), new Response('{}')]);
  assert.equal((await retryingFetch(fetchImpl, fast)(post())).status, 503);
  assert.equal(seen.length, 1);
});

test('an aborted request stops waiting between retries', async () => {
  const controller = new AbortController();
  const { fetchImpl } = scripted([problem(503, 'store-unavailable', { 'retry-after': '60' }), new Response('{}')]);
  const request = new Request('http://hub.test/v1/agents', { signal: controller.signal });
  const pending = retryingFetch(fetchImpl, { maxDelayMs: 60_000 })(request);
  setTimeout(() => controller.abort(new Error('gave up')), 20);
  await assert.rejects(pending, /gave up/);
});
