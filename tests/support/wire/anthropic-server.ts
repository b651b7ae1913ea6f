// A local stand-in for Anthropic's Messages API: `POST /v1/messages` answered by
// replaying recordings from tests/fixtures/anthropic/, the scenario chosen by the
// request's `model`. Every request is recorded (headers, parsed body, and when its
// connection closed) so tests can assert what the adapter sent and that it hung up.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const FIXTURES = new URL('../../fixtures/anthropic/', import.meta.url);

/** One answer: a recorded stream (optionally slowed, stalled or cut) or a recorded error. */
export type Reply =
  | {
      stream: string;
      /** Pause before each event after the first. */
      delayMs?: number;
      /** Destroy the socket after this many events (past the last one: instead of ending the answer). */
      cutAfter?: number;
      /** Send this many events, then nothing more while the connection stays open. */
      stallAfter?: number;
    }
  | {
      error: string;
      /** Headers that replace the recording's (a shorter retry-after, say). */
      headers?: Record<string, string>;
    }
  | { hang: true };

/** Scenario name (the request's `model`) → its answers; the N-th request of a scenario gets answer N (the last repeats). */
export const SCENARIOS: Record<string, Reply[]> = {
  text: [{ stream: 'text.sse' }],
  'parallel-tools': [{ stream: 'parallel-tool-use.sse' }],
  structured: [{ stream: 'structured-output.sse' }],
  'thinking-cached': [{ stream: 'thinking-cached.sse' }],
  'max-tokens': [{ stream: 'max-tokens.sse' }],
  'rate-limited': [{ error: 'rate-limit-429.json' }],
  overloaded: [{ error: 'overloaded-529.json' }],
  'fail-then-ok': [{ error: 'api-error-500.json' }, { stream: 'text.sse' }],
  'rate-limited-then-ok': [{ error: 'rate-limit-429.json', headers: { 'retry-after': '1' } }, { stream: 'text.sse' }],
  'tools-then-text': [{ stream: 'parallel-tool-use.sse' }, { stream: 'text.sse' }],
  'cut-then-ok': [{ stream: 'text.sse', cutAfter: 4 }, { stream: 'text.sse' }],
  unauthorized: [{ error: 'authentication-401.json' }],
  'unauthorized-echo': [{ error: 'authentication-401-echo.json' }],
  'bad-request': [{ error: 'invalid-request-400.json' }],
  'overloaded-midstream': [{ stream: 'overloaded-midstream.sse' }],
  cut: [{ stream: 'text.sse', cutAfter: 4 }],
  'cut-after-stop': [{ stream: 'text.sse', cutAfter: Number.POSITIVE_INFINITY }],
  slow: [{ stream: 'text.sse', delayMs: 300 }],
  stall: [{ stream: 'text.sse', stallAfter: 4 }],
  hang: [{ hang: true }],
};

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** When the request arrived (ms since epoch). */
  receivedAt: number;
  /** When the client's connection closed (ms since epoch); null while open. */
  closedAt: number | null;
  /** Resolves when the connection closes. */
  closed: Promise<void>;
  /** True when the answer was written to its end (not cut, stalled or abandoned). */
  finished: boolean;
}

export interface AnthropicTestServer {
  /** The base URL to give the SDK (it appends /v1/messages). */
  baseUrl: string;
  requests: RecordedRequest[];
  /** The requests whose model was `scenario`. */
  requestsFor(scenario: string): RecordedRequest[];
  /** Forgets every request and scenario count, as a freshly started server. */
  reset(): void;
  close(): Promise<void>;
}

/** Splits a recording into its events, each with its terminating blank line. */
function sseEvents(name: string): string[] {
  const text = readFileSync(new URL(name, FIXTURES), 'utf8');
  return text
    .split(/\n\n/)
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => `${chunk}\n\n`);
}

interface ErrorRecording {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

function writeError(res: ServerResponse, name: string, credential: string, headers: Record<string, string> = {}): void {
  const recording = JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as ErrorRecording;
  const body = JSON.stringify(recording.body).split('{credential}').join(credential);
  res.writeHead(recording.status, { ...recording.headers, ...headers }).end(body);
}

function notFound(res: ServerResponse, message: string): void {
  res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message } }));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startAnthropicServer(): Promise<AnthropicTestServer> {
  const requests: RecordedRequest[] = [];
  const served = new Map<string, number>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let closeConnection!: () => void;
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: safeJson(Buffer.concat(chunks).toString('utf8')),
        receivedAt: Date.now(),
        closedAt: null,
        closed: new Promise<void>((resolve) => (closeConnection = resolve)),
        finished: false,
      };
      requests.push(recorded);
      res.on('close', () => {
        recorded.closedAt = Date.now();
        closeConnection();
      });
      void answer(recorded, res).catch(() => res.destroy());
    });
  });

  async function answer(recorded: RecordedRequest, res: ServerResponse): Promise<void> {
    if (recorded.method !== 'POST' || recorded.path !== '/v1/messages') return notFound(res, `Not found: ${recorded.method} ${recorded.path}`);
    const scenario = String(recorded.body?.model ?? '');
    const replies = SCENARIOS[scenario];
    if (!replies) return notFound(res, `model: ${scenario}`);
    const index = served.get(scenario) ?? 0;
    served.set(scenario, index + 1);
    const reply = replies[Math.min(index, replies.length - 1)];

    if ('hang' in reply) return;
    if ('error' in reply) {
      const credential = String(recorded.headers['x-api-key'] ?? recorded.headers.authorization ?? '');
      writeError(res, reply.error, credential, reply.headers);
      recorded.finished = true;
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': `req_replay_${scenario}`,
    });
    const events = sseEvents(reply.stream);
    for (const [i, event] of events.entries()) {
      if (res.destroyed) return;
      if (i > 0 && reply.delayMs) await sleep(reply.delayMs);
      if (res.destroyed) return;
      if (reply.cutAfter !== undefined && i === reply.cutAfter) {
        res.socket?.destroy();
        return;
      }
      if (reply.stallAfter !== undefined && i === reply.stallAfter) return;
      await new Promise<void>((resolve) => res.write(event, () => resolve()));
    }
    if (reply.cutAfter !== undefined) {
      res.socket?.destroy();
      return;
    }
    res.end();
    recorded.finished = true;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    requestsFor: (scenario) => requests.filter((r) => r.body?.model === scenario),
    reset() {
      requests.length = 0;
      served.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
