// A local server speaking OpenAI's wire format, for testing the adapters with the
// real SDK: POST /v1/responses (SSE with `event:` and `data:` lines) and
// POST /v1/chat/completions (`data:` chunks ending in `data: [DONE]`), replaying
// recordings from tests/fixtures/openai/. The request's model name picks the
// scenario (counted per API, so one server can serve both adapters); every
// request is recorded with its headers, body and how it ended.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const FIXTURES = fileURLToPath(new URL('../../fixtures/openai/', import.meta.url));

export type WireApi = 'responses' | 'chat';

interface ErrorAnswer {
  status: number;
  /** A file in fixtures/openai/errors/; `{{api_key}}` becomes the key the request carried. */
  body: string;
  headers?: () => Record<string, string>;
}

interface Scenario {
  /** A recording in fixtures/openai/<api>/, without the `.sse` extension. */
  stream?: string;
  error?: ErrorAnswer;
  /** Answer the first request of this scenario with this error, later ones with `stream`. */
  firstError?: ErrorAnswer;
  /** Answer the first request of this scenario as this scenario, later ones as the rest. */
  first?: Scenario;
  /** Destroy the socket after this many events (a connection that breaks). */
  cutAfter?: number;
  /** End the response cleanly after this many events (a stream that stops short). */
  endAfter?: number;
  /** Send this many events, then nothing, holding the connection open. */
  stallAfter?: number;
  /** Never answer at all. */
  hang?: boolean;
  /** Pause between events. */
  delayMs?: number;
}

const json = (body: string, status: number, headers: () => Record<string, string> = () => ({})): ErrorAnswer => ({ status, body, headers });
const RETRY_AFTER_DATE_MS = 30_000;

export const SCENARIOS: Record<string, Scenario> = {
  'scenario-text': { stream: 'text' },
  'scenario-tools': { stream: 'tools' },
  'scenario-structured': { stream: 'structured' },
  'scenario-incomplete': { stream: 'incomplete' },
  'scenario-length': { stream: 'length' },
  'scenario-failed': { stream: 'failed' },
  'scenario-error-event': { stream: 'error-event' },
  'scenario-stream-error': { stream: 'stream-error' },
  'scenario-local-text': { stream: 'local-text' },
  'scenario-nul-text': { stream: 'nul-text' },
  'scenario-local-tools': { stream: 'local-tools' },
  'scenario-terminal-only': { stream: 'terminal-only' },
  'scenario-429': { error: json('429.json', 429, () => ({ 'retry-after': '7' })) },
  'scenario-429-ms': { error: json('429.json', 429, () => ({ 'retry-after-ms': '2400', 'retry-after': '3' })) },
  'scenario-429-date': { error: json('429.json', 429, () => ({ 'retry-after': new Date(Date.now() + RETRY_AFTER_DATE_MS).toUTCString() })) },
  'scenario-500-then-text': { firstError: json('500.json', 500), stream: 'text' },
  'scenario-429-then-text': { firstError: json('429.json', 429, () => ({ 'retry-after': '1' })), stream: 'text' },
  'scenario-tools-then-text': { first: { stream: 'tools' }, stream: 'text' },
  'scenario-cut-then-text': { first: { stream: 'text', cutAfter: 6 }, stream: 'text' },
  'scenario-400': { error: json('400.json', 400) },
  'scenario-401': { error: json('401.json', 401) },
  'scenario-502-html': { error: json('502.html', 502) },
  'scenario-cut': { stream: 'text', cutAfter: 6 },
  'scenario-short': { stream: 'text', endAfter: 6 },
  'scenario-slow': { stream: 'text', delayMs: 100 },
  'scenario-stall': { stream: 'text', stallAfter: 6 },
  'scenario-hang': { hang: true },
};

export interface RecordedRequest {
  api: WireApi;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** When the request arrived (ms since epoch). */
  receivedAt: number;
  /** Resolves when the connection closes, for whatever reason. */
  closed: Promise<void>;
  /** Whether the whole answer was written before the connection closed. */
  finished: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const recordingPath = (api: WireApi, name: string) => `${FIXTURES}${api}/${name}.sse`;

/** Events of a recording, each with its blank-line terminator. */
export function readRecording(api: WireApi, name: string): string[] {
  const text = readFileSync(recordingPath(api, name), 'utf8');
  return text.split(/(?<=\n\n)/).filter((event) => event.trim() !== '');
}

export class OpenAIWireServer {
  readonly requests: RecordedRequest[] = [];
  private readonly seen = new Map<string, number>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<OpenAIWireServer> {
    let wire: OpenAIWireServer | undefined;
    const server = createServer((req, res) => void wire!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    wire = new OpenAIWireServer(server, `http://127.0.0.1:${port}/v1`);
    return wire;
  }

  /** The requests one scenario received (of one API, if given), oldest first. */
  requestsFor(model: string, api?: WireApi): RecordedRequest[] {
    return this.requests.filter((r) => r.body?.model === model && (api === undefined || r.api === api));
  }

  /** Forgets every request and scenario count, as a freshly started server. */
  reset(): void {
    this.requests.length = 0;
    this.seen.clear();
  }

  lastRequest(): RecordedRequest {
    const last = this.requests.at(-1);
    if (!last) throw new Error('the server received no request');
    return last;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const api: WireApi | null = req.url === '/v1/responses' ? 'responses' : req.url === '/v1/chat/completions' ? 'chat' : null;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: any = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = null;
    }
    let closed!: () => void;
    const record: RecordedRequest = {
      api: api ?? 'responses',
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      receivedAt: Date.now(),
      closed: new Promise<void>((resolve) => (closed = resolve)),
      finished: false,
    };
    res.on('close', () => {
      record.finished = res.writableFinished;
      closed();
    });
    this.requests.push(record);

    if (req.method !== 'POST' || api === null) return this.sendError(res, 404, invalidRequest(`Unknown request URL: ${req.method} ${req.url}.`));
    if (body?.stream !== true) return this.sendError(res, 400, invalidRequest('This test server only streams: set "stream": true.'));
    const name = String(body.model);
    const named = SCENARIOS[name];
    if (!named) return this.sendError(res, 404, invalidRequest(`The model \`${name}\` does not exist or you do not have access to it.`));
    const count = this.seen.get(`${api}:${name}`) ?? 0;
    this.seen.set(`${api}:${name}`, count + 1);
    const scenario = count === 0 && named.first ? named.first : named;

    if (scenario.hang) return;
    const error = scenario.error ?? (count === 0 ? scenario.firstError : undefined);
    if (error) {
      const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      const text = readFileSync(`${FIXTURES}errors/${error.body}`, 'utf8').replaceAll('{{api_key}}', key);
      const type = error.body.endsWith('.html') ? 'text/html' : 'application/json';
      res.writeHead(error.status, { 'content-type': type, 'x-request-id': `req_${count}`, ...error.headers?.() });
      res.end(text);
      return;
    }
    if (!existsSync(recordingPath(api, scenario.stream!))) {
      return this.sendError(res, 404, invalidRequest(`There is no ${api} recording of \`${name}\`.`));
    }
    await this.replay(res, readRecording(api, scenario.stream!), scenario);
  }

  private async replay(res: ServerResponse, events: string[], scenario: Scenario): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': 'req_stream' });
    for (const [index, event] of events.entries()) {
      if (res.destroyed) return;
      if (index === scenario.cutAfter) {
        // Let what was written reach the client before the connection dies mid-body.
        await sleep(50);
        return void res.socket?.destroy();
      }
      if (index === scenario.endAfter) return void res.end();
      if (index === scenario.stallAfter) return;
      if (index > 0 && scenario.delayMs) await sleep(scenario.delayMs);
      if (res.destroyed) return;
      res.write(event);
    }
    res.end();
  }

  private sendError(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}

const invalidRequest = (message: string) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } });
