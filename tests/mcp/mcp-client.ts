// The official MCP SDK client against a test hub's /mcp, over a real socket.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';

export { listen, type Listening } from '../support/listen.js';

export interface ConnectOptions {
  capabilities?: ClientCapabilities;
  sessionId?: string;
  /** Instead of the global fetch (a balancer, a fault). */
  fetch?: FetchLike;
}

/** A connected SDK client with the bearer key; `transport` exposes the session id. */
export async function connect(baseUrl: string, apiKey: string, options: ConnectOptions = {}) {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), {
    requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
    sessionId: options.sessionId,
    fetch: options.fetch,
    reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
  });
  const client = new Client({ name: 'palai-test', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
  await client.connect(transport);
  return { client, transport };
}

/** Raw POST to /mcp: for what the SDK client would never send. */
export function rawPost(baseUrl: string, headers: Record<string, string>, body: string): Promise<Response> {
  return fetch(new URL('/mcp', baseUrl), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A body that delivers its first `events` SSE events and then fails, as a
 * dropped connection would: the client has seen those events' ids, no more.
 */
export function cutAfterEvents(res: Response, events: number): Response {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffered = '';
  let delivered = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      buffered += decoder.decode(value, { stream: true });
      let out = '';
      let boundary: number;
      while ((boundary = buffered.indexOf('\n\n')) !== -1) {
        const frame = buffered.slice(0, boundary + 2);
        buffered = buffered.slice(boundary + 2);
        // Keep-alive comments are not events.
        if (!frame.startsWith(':')) delivered++;
        out += frame;
        if (delivered >= events) {
          controller.enqueue(encoder.encode(out));
          await reader.cancel();
          controller.error(new TypeError('terminated: the connection was reset'));
          return;
        }
      }
      if (out) controller.enqueue(encoder.encode(out));
    },
    cancel: () => reader.cancel(),
  });
  return new Response(body, { status: res.status, headers: res.headers });
}

export interface Balancer {
  fetch: FetchLike;
  /** Which backend answered each request, in order: `${method} ${backend index}`. */
  log: string[];
}

/**
 * A load balancer in a fetch: each request goes to the next backend in turn,
 * and the first tools/call stream is cut after `cutAfter` events (when given);
 * a resume (GET with Last-Event-ID) goes to the backend after the one cut off.
 */
export function balancer(backends: string[], cutAfter?: number): Balancer {
  let next = 0;
  let cut = cutAfter !== undefined;
  let cutOn: number | null = null;
  const log: string[] = [];
  return {
    log,
    async fetch(url, init) {
      const resuming = new Headers(init?.headers).has('last-event-id');
      const index = resuming && cutOn !== null ? (cutOn + 1) % backends.length : next++ % backends.length;
      const target = new URL(url);
      const backend = new URL(backends[index]);
      target.protocol = backend.protocol;
      target.host = backend.host;
      const method = init?.method ?? 'GET';
      const isCall = method === 'POST' && typeof init?.body === 'string' && init.body.includes('"tools/call"');
      log.push(`${method}${isCall ? ' tools/call' : ''}${resuming ? ' resume' : ''} ${index}`);
      const res = await fetch(target, init);
      if (cut && isCall && res.headers.get('content-type')?.startsWith('text/event-stream')) {
        cut = false;
        cutOn = index;
        return cutAfterEvents(res, cutAfter!);
      }
      return res;
    },
  };
}

/** A fetch that reports the session's standalone stream (GET without Last-Event-ID): when it opened, and when the server ended it. */
export function watchingStandaloneStream(through: FetchLike = fetch): { fetch: FetchLike; opened: Promise<void>; endedByServer: Promise<void> } {
  let open!: () => void;
  let end!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const endedByServer = new Promise<void>((resolve) => (end = resolve));
  let seen = false;
  return {
    opened,
    endedByServer,
    async fetch(url, init) {
      const res = await through(url, init);
      const headers = new Headers(init?.headers);
      if (seen || (init?.method ?? 'GET') !== 'GET' || headers.has('last-event-id') || res.status !== 200 || !res.body) return res;
      seen = true;
      open();
      const reader = res.body.getReader();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (!done) return controller.enqueue(value);
          end();
          controller.close();
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return new Response(body, { status: res.status, headers: res.headers });
    },
  };
}
