// A local stand-in for Slack's Web API: an HTTP server on 127.0.0.1 that
// records every call (method, token, form or JSON arguments) and answers
// `{ok: true, ...}` as Slack does. `rateLimitNext(method, seconds)` makes the
// next call of that method answer 429 with Retry-After, once.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlackCall {
  method: string;
  token: string | null;
  args: Record<string, unknown>;
  /** The HTTP status this call was answered with. */
  status: number;
}

export interface FakeSlackApi {
  /** The api_url to give a bot (ends in `/`). */
  url: string;
  calls: SlackCall[];
  rateLimitNext(method: string, retryAfterSeconds: number): void;
  close(): Promise<void>;
}

async function readArgs(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (String(req.headers['content-type']).startsWith('application/json')) return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  return Object.fromEntries(new URLSearchParams(text));
}

export async function startFakeSlackApi(): Promise<FakeSlackApi> {
  const calls: SlackCall[] = [];
  const limited = new Map<string, number>();
  let ts = 1_700_000_000;
  const server: Server = createServer((req, res) => {
    void readArgs(req).then((args) => {
      const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0];
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '') || null;
      const retryAfter = limited.get(method);
      if (retryAfter !== undefined) {
        limited.delete(method);
        calls.push({ method, token, args, status: 429 });
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfter) }).end(JSON.stringify({ ok: false, error: 'ratelimited' }));
        return;
      }
      calls.push({ method, token, args, status: 200 });
      const answer = method === 'chat.postMessage' ? { ok: true, channel: args.channel, ts: `${++ts}.000100`, message: { text: args.text } } : { ok: true };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/`,
    calls,
    rateLimitNext: (method, seconds) => void limited.set(method, seconds),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
