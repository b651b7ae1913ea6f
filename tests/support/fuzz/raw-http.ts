// Requests no HTTP client library will send: bytes written straight to a socket —
// NUL and bare CR in header values, malformed request lines and framing, conflicting
// lengths, corrupt compressed bodies — for a `palai serve` in its own process.
import fc from 'fast-check';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { operations } from '../../../generated/operations.js';

export interface RawCase {
  requestLine: string;
  headers: string[];
  body: string;
  /** What makes it hostile, for the counterexample. */
  note: string;
}

export interface RawAnswer {
  status: number | null;
  headers: Record<string, string>;
  body: string;
  raw: string;
}

const targets = operations.map((op) => op.path.replace(/\{\w+\}/g, 'x'));

const requestLines = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...operations.map((op) => op.method)), fc.constantFrom(...targets)).map(([m, t]) => `${m} ${t} HTTP/1.1`) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom('GET', 'POST', 'DELETE'),
        fc.constantFrom('/v1/agents/', '/v1/responses/', '/v1/sessions/', '/v1/agents?after='),
        fc.constantFrom('%00', '\x00', '\xff\xfe', '%E0%A4%A', 'a b', '#frag', '%', '\x7f', 'é'),
      )
      .map(([m, p, s]) => `${m} ${p}${s} HTTP/1.1`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'FOO /v1/agents HTTP/1.1',
      'GET * HTTP/1.1',
      'GET http://elsewhere.example/v1/agents HTTP/1.1',
      'GET /v1/agents HTTP/9.9',
      'GET /v1/agents',
      'GET /v1/agents HTTP/1.0',
      'get /v1/agents HTTP/1.1',
      '\x00\x01\x02',
      'GET //v1//agents HTTP/1.1',
      `GET /${'a'.repeat(20_000)} HTTP/1.1`,
    ),
  },
);

/** One hostile header line (or several), raw. */
const hostileHeaders = fc.constantFrom(
  ['Last-Event-ID: 1\x002'],
  ['Last-Event-ID: \xe9\xff'],
  ['Last-Event-ID: 99999999999999999999'],
  ['Idempotency-Key: a\x00b'],
  ['Idempotency-Key: \xff\xfe'],
  ['Authorization: Bearer \x00'],
  ['Authorization: Bearer palai_sk_\xff'],
  ['X-Folded: first', ' continued'],
  ['X-Bare-CR: a\rb'],
  ['Content-Type: application/json\x00'],
  ['Content-Type: \xe9'],
  ['Content-Encoding: gzip\x00'],
  [`X-Huge: ${'h'.repeat(20_000)}`],
  Array.from({ length: 300 }, (_, i) => `X-Many-${i}: v`),
  ['NoColonHere'],
  [': empty-name'],
  ['Host: a', 'Host: b'],
);

const JSON_BODY = '{"name":"raw-agent","model":{"provider":"fake"}}';

const framings = fc.constantFrom(
  { headers: [`Content-Length: ${JSON_BODY.length}`], body: JSON_BODY, note: 'a well-framed JSON body' },
  { headers: ['Content-Length: 5', 'Content-Length: 7'], body: '{}', note: 'two Content-Lengths' },
  { headers: ['Content-Length: -1'], body: '{}', note: 'negative Content-Length' },
  { headers: ['Content-Length: 1x'], body: '{}', note: 'non-numeric Content-Length' },
  { headers: ['Content-Length: 99999999999999999999'], body: '{}', note: 'huge Content-Length' },
  { headers: ['Transfer-Encoding: chunked'], body: 'zz\r\n{}\r\n0\r\n\r\n', note: 'a malformed chunk size' },
  { headers: ['Transfer-Encoding: chunked'], body: '2\r\n{}\r\n', note: 'a chunked body that never ends' },
  { headers: ['Transfer-Encoding: chunked', 'Content-Length: 2'], body: '2\r\n{}\r\n0\r\n\r\n', note: 'both Transfer-Encoding and Content-Length' },
  { headers: ['Transfer-Encoding: gzip, chunked'], body: '2\r\n{}\r\n0\r\n\r\n', note: 'a transfer coding Node does not decode' },
  { headers: ['Content-Length: 20'], body: '{}', note: 'a body shorter than its Content-Length' },
  { headers: ['Content-Encoding: gzip', 'Content-Length: 9'], body: 'not gzip!', note: 'a corrupt gzip body' },
  {
    headers: ['Content-Encoding: gzip', `Content-Length: ${gzipSync(JSON_BODY).subarray(0, 12).length}`],
    body: gzipSync(JSON_BODY).subarray(0, 12).toString('latin1'),
    note: 'a truncated gzip body',
  },
  { headers: ['Content-Encoding: br', 'Content-Length: 7'], body: 'not br!', note: 'a corrupt br body' },
  { headers: ['Content-Encoding: zstd', 'Content-Length: 2'], body: '{}', note: 'an unknown Content-Encoding' },
  { headers: ['Expect: 100-continue', `Content-Length: ${JSON_BODY.length}`], body: JSON_BODY, note: 'Expect: 100-continue' },
  { headers: ['Content-Length: 14'], body: '{"a":"\x00\xff"}', note: 'raw NUL and invalid UTF-8 in JSON text' },
);

export function rawCases(apiKey: string): fc.Arbitrary<RawCase> {
  return fc.tuple(requestLines, fc.oneof(fc.constant([] as string[]), hostileHeaders), framings, fc.boolean()).map(([requestLine, extra, framing, json]) => ({
    requestLine,
    headers: [
      'Host: 127.0.0.1',
      `Authorization: Bearer ${apiKey}`,
      ...(json ? ['Content-Type: application/json'] : []),
      ...framing.headers,
      ...extra,
      'Connection: close',
    ],
    body: framing.body,
    note: framing.note,
  }));
}

/** Bytes of `raw`, each character one byte (latin1), as a naive client would write them. */
export const rawBytes = (raw: RawCase): Buffer => Buffer.from(`${raw.requestLine}\r\n${raw.headers.join('\r\n')}\r\n\r\n${raw.body}`, 'latin1');

/** How long the server may stay silent before the socket is closed from our side (a request it still waits on). */
const SILENCE_MS = 1_000;

/** Writes the bytes and reads the first answer (null status: the server closed without one). */
export function sendRaw(port: number, bytes: Buffer): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    // Silence: half-close (a request still waiting for its body ends there), then give up.
    let timer = setTimeout(() => {
      socket.end();
      timer = setTimeout(() => socket.destroy(), SILENCE_MS);
    }, SILENCE_MS);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      clearTimeout(timer);
      timer = setTimeout(() => socket.destroy(), SILENCE_MS);
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseAnswer(Buffer.concat(chunks).toString('latin1')));
    });
  });
}

function parseAnswer(raw: string): RawAnswer {
  // A 100 Continue comes first for an Expect request; the answer is the one after it.
  const text = raw.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
  const head = text.split('\r\n\r\n', 1)[0];
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head);
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = text.slice(head.length + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = unchunk(body);
  return { status: status ? Number(status[1]) : null, headers, body: Buffer.from(body, 'latin1').toString('utf8'), raw };
}

function unchunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, line), 16);
    if (line < 0 || !(size > 0)) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}
