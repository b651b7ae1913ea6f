// A fuzz case on the wire: the bytes of its body (compressed, corrupted, nested
// deep as the case says) sent with node:http, and the answer read back — event
// streams only for a moment, since a live one may never end.
import http, { type IncomingHttpHeaders } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { operations } from '../../../generated/operations.js';
import { DEEP_MARKER, type BodyCase, type EncodingCase, type FuzzCase } from './requests.js';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed JSON body, or {} when the body is not JSON. */
  body: any;
}

/** How long an event stream is read before the fuzzer hangs up. */
const STREAM_READ_MS = 1_500;
/** A request not answered by then is a hung request. */
const ANSWER_TIMEOUT_MS = 30_000;

function deepText(depth: number, shape: 'object' | 'array'): string {
  return shape === 'object' ? '{"d":'.repeat(depth) + '0' + '}'.repeat(depth) : '['.repeat(depth) + ']'.repeat(depth);
}

export function bodyBytes(body: BodyCase): Buffer {
  switch (body.kind) {
    case 'json': {
      const text = JSON.stringify(body.value) ?? 'null';
      return Buffer.from(body.deep ? text.replace(JSON.stringify(DEEP_MARKER), deepText(body.deep.depth, body.deep.shape)) : text);
    }
    case 'text':
      return Buffer.from(body.text);
    case 'bytes':
      return Buffer.from(body.bytes);
    case 'oversized':
      return Buffer.from(`{"pad":"${'x'.repeat(Math.max(0, body.size - 10))}"}`);
  }
}

function encode(bytes: Buffer, encoding: EncodingCase): Buffer {
  if ('unknown' in encoding) return bytes;
  if (encoding.corrupt === 'garbage') return Buffer.from('this is not compressed data at all');
  const compressed =
    encoding.name === 'gzip' ? gzipSync(bytes) : encoding.name === 'deflate' ? deflateSync(bytes) : encoding.name === 'br' ? brotliCompressSync(bytes) : bytes;
  return encoding.corrupt === 'truncated' ? compressed.subarray(0, Math.max(1, Math.floor(compressed.length / 2))) : compressed;
}

export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
}

export function toWire(fuzz: FuzzCase): WireRequest {
  const op = operations.find((o) => o.operationId === fuzz.operation)!;
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => fuzz.path[name]) + (fuzz.query ? `?${fuzz.query}` : '');
  const headers = { ...fuzz.headers };
  let body = fuzz.body ? bodyBytes(fuzz.body) : null;
  if (body && fuzz.encoding) {
    body = encode(body, fuzz.encoding);
    headers['content-encoding'] = fuzz.encoding.name;
  }
  if (body) headers['content-length'] = String(body.length);
  else if (fuzz.method === 'POST') headers['content-length'] = '0';
  return { method: fuzz.method, path, headers, body };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** Sends `request` to the server at `port` on 127.0.0.1 and reads the answer. */
export function send(port: number, request: WireRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: request.method, path: request.path, headers: request.headers, agent });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)), ANSWER_TIMEOUT_MS);
    req.on('error', (error) => (clearTimeout(timer), reject(error)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      const stream = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearTimeout(hangUp);
        const text = Buffer.concat(chunks).toString('utf8');
        let body: any = {};
        if (/json/.test(String(res.headers['content-type']))) {
          try {
            body = JSON.parse(text);
          } catch {
            body = { unparsable: text };
          }
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, body });
      };
      // A live stream may follow the response for ever: what arrived by then is enough.
      const hangUp = stream ? setTimeout(() => (res.destroy(), finish()), STREAM_READ_MS) : undefined;
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', () => finish());
    });
    req.end(request.body ?? undefined);
  });
}

export function closeConnections(): void {
  agent.destroy();
}
