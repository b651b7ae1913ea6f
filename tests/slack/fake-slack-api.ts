// A local stand-in for Slack's Web API: an HTTP server on 127.0.0.1 that
// records every call (method, token, form or JSON arguments) and answers as
// Slack does: `{ok: true, ...}` with a fresh `ts` for methods that create a
// message. `rateLimitNext(method, seconds)` makes the next call of a method
// answer 429 with Retry-After, once; `refuse(method, error)` makes every call
// of a method answer `{ok: false, error}` (a server without streaming, say).
// `hold(method, match)` applies matching calls at once (the message shows in
// the thread) but keeps their answers until released: the window between
// Slack showing a message and the poster learning its ts.
// `messages` replays the calls into what a thread would show.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlackCall {
  method: string;
  token: string | null;
  args: Record<string, unknown>;
  /** The HTTP status this call was answered with. */
  status: number;
  /** Slack's `ok`. */
  ok: boolean;
  /** The ts of the message the call created, if it did. */
  ts?: string;
}

/** A message as the thread would show it, rebuilt from the calls. */
export interface SlackMessageView {
  ts: string;
  channel: string;
  threadTs: string | null;
  text: string;
  blocks: unknown[] | null;
  streaming: boolean;
  edits: number;
  deleted: boolean;
}

export interface FakeSlackApi {
  /** The api_url to give a bot (ends in `/`). */
  url: string;
  calls: SlackCall[];
  rateLimitNext(method: string, retryAfterSeconds: number): void;
  refuse(method: string, error: string | null): void;
  /** Answers for methods the stand-in does not know (apps.connections.open, say). */
  answer(method: string, body: Record<string, unknown> | null): void;
  /** Matching calls of a method take effect at once; their answers wait until the returned release is called. */
  hold(method: string, match: (args: Record<string, unknown>) => boolean): { release(): void; held(): number };
  /** Every later call with this token is refused `invalid_auth`, whatever the method's answer: a revoked token stays revoked. */
  revokeToken(token: string): void;
  /** Messages of a channel (and thread), oldest first. */
  messages(channel: string, threadTs?: string): SlackMessageView[];
  /** The calls about one thread: posting in it, or writing a message of it. */
  callsIn(channel: string, threadTs: string): SlackCall[];
  close(): Promise<void>;
}

async function readArgs(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (String(req.headers['content-type']).startsWith('application/json')) return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  const args: Record<string, unknown> = Object.fromEntries(new URLSearchParams(text));
  // The Web API client sends objects and arrays as JSON strings in forms.
  for (const key of ['blocks', 'chunks', 'metadata']) if (typeof args[key] === 'string') args[key] = JSON.parse(args[key] as string);
  return args;
}

const CREATES = new Set(['chat.postMessage', 'chat.startStream']);

export async function startFakeSlackApi(): Promise<FakeSlackApi> {
  const calls: SlackCall[] = [];
  const limited = new Map<string, number>();
  const refused = new Map<string, string>();
  const answers = new Map<string, Record<string, unknown>>();
  const revoked = new Set<string>();
  const views = new Map<string, SlackMessageView>();
  const holds = new Map<string, { match: (args: Record<string, unknown>) => boolean; waiting: Array<() => void> }>();
  let ts = 1_700_000_000;
  const text = (args: Record<string, unknown>) => String(args.markdown_text ?? args.text ?? '');
  const apply = (method: string, args: Record<string, unknown>, created?: string): string | null => {
    const view = views.get(String(args.ts));
    switch (method) {
      case 'chat.postMessage':
      case 'chat.startStream':
        views.set(created!, {
          ts: created!,
          channel: String(args.channel),
          threadTs: args.thread_ts ? String(args.thread_ts) : null,
          text: text(args),
          blocks: (args.blocks as unknown[]) ?? null,
          streaming: method === 'chat.startStream',
          edits: 0,
          deleted: false,
        });
        return null;
      case 'chat.appendStream':
        if (!view?.streaming) return 'message_not_in_streaming_state';
        view.text += text(args);
        return null;
      case 'chat.stopStream':
        if (!view?.streaming) return 'message_not_in_streaming_state';
        view.text += text(args);
        view.streaming = false;
        return null;
      case 'chat.update':
        if (!view) return 'message_not_found';
        view.text = text(args);
        view.blocks = (args.blocks as unknown[]) ?? null;
        view.edits += 1;
        return null;
      case 'chat.delete':
        if (!view) return 'message_not_found';
        view.deleted = true;
        return null;
      default:
        return null;
    }
  };
  const server: Server = createServer((req, res) => {
    void readArgs(req).then((args) => {
      const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0];
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '') || null;
      const reply = (status: number, body: Record<string, unknown>, extra: Partial<SlackCall> = {}, headers: Record<string, string> = {}) => {
        calls.push({ method, token, args, status, ok: body.ok === true, ...extra });
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      };
      const retryAfter = limited.get(method);
      if (retryAfter !== undefined) {
        limited.delete(method);
        return reply(429, { ok: false, error: 'ratelimited' }, {}, { 'retry-after': String(retryAfter) });
      }
      if (token !== null && revoked.has(token)) return reply(200, { ok: false, error: 'invalid_auth' });
      const refusal = refused.get(method);
      if (refusal) return reply(200, { ok: false, error: refusal });
      const created = CREATES.has(method) ? `${++ts}.000100` : undefined;
      const error = apply(method, args, created);
      if (error) return reply(200, { ok: false, error });
      const answer = answers.get(method) ?? {};
      const send = () => reply(200, { ok: true, ...answer, ...(created ? { channel: args.channel, ts: created } : {}) }, created ? { ts: created } : {});
      const hold = holds.get(method);
      if (hold?.match(args)) hold.waiting.push(send);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/`,
    calls,
    rateLimitNext: (method, seconds) => void limited.set(method, seconds),
    refuse: (method, error) => void (error ? refused.set(method, error) : refused.delete(method)),
    answer: (method, body) => void (body ? answers.set(method, body) : answers.delete(method)),
    hold: (method, match) => {
      const hold = { match, waiting: [] as Array<() => void> };
      holds.set(method, hold);
      return {
        held: () => hold.waiting.length,
        release: () => {
          holds.delete(method);
          for (const send of hold.waiting.splice(0)) send();
        },
      };
    },
    revokeToken: (token) => void revoked.add(token),
    callsIn: (channel, threadTs) =>
      calls.filter(
        (c) =>
          (c.args.channel ?? c.args.channel_id) === channel &&
          (c.args.thread_ts === threadTs || (c.args.ts !== undefined && views.get(String(c.args.ts))?.threadTs === threadTs)),
      ),
    messages: (channel, threadTs) =>
      [...views.values()].filter((v) => v.channel === channel && (threadTs === undefined || v.threadTs === threadTs) && !v.deleted),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
