// The guarded fetch: one undici Agent whose connector is the egress check, so
// connections are pooled per origin and each new one is checked. Node's global
// fetch is not used: it runs its own bundled undici, and a dispatcher from this
// package is not guaranteed to work with it. undici is loaded at the first
// call, not at start: a hub that never calls out never pays it.
//
// A call whose body is text or bytes (what the provider SDKs, MCP, A2A and the
// webhooks send) goes through the Agent's `request` and its answer is wrapped
// as a Response: about half the CPU of undici's fetch, whose WHATWG layers
// (request and header objects, its controller) are most of a model call's
// transport cost. Anything else (a streamed or form body, or a caller that asks
// for a compressed answer, which fetch would decompress) takes undici's fetch.
import { Readable } from 'node:stream';
import type { Agent, Dispatcher, RequestInit as UndiciRequestInit } from 'undici';
import { PalaiError } from '../errors/palai-error.js';
import { egressRefusalIn, type EgressFetch, type EgressOptions } from './egress-port.js';
import { guardedConnector, systemResolver } from './guarded-connector.js';

/** A URL and init from fetch's arguments; a Request's own fields are the defaults of `init`. */
function unpack(input: string | URL | Request, init: RequestInit = {}): { url: string; init: RequestInit } {
  if (typeof input === 'string') return { url: input, init };
  if (input instanceof URL) return { url: input.href, init };
  const fromRequest: RequestInit & { duplex?: 'half' } = { method: input.method, headers: input.headers, signal: input.signal };
  if (input.body) Object.assign(fromRequest, { body: input.body, duplex: 'half' });
  return { url: input.url, init: { ...fromRequest, ...init } };
}

function httpUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PalaiError('invalid-request', `Not a URL: ${JSON.stringify(url.slice(0, 200))}.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new PalaiError('egress-denied', `Outbound calls may use http and https only, not ${parsed.protocol}.`);
  }
  return parsed;
}

type Method = Dispatcher.HttpMethod;

/** The body `request` can send as it is: text or bytes (or none). */
function plainBody(body: RequestInit['body']): string | Uint8Array | null | undefined {
  if (body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return undefined;
}

/** The init's headers by lower-case name (repeats joined, as Headers joins them), or null when the call must take fetch (it asks for a compressed answer). */
function plainHeaders(headers: RequestInit['headers']): Record<string, string> | null {
  const pairs: Iterable<[string, string]> =
    headers === undefined
      ? []
      : headers instanceof Headers || Array.isArray(headers)
        ? (headers as Iterable<[string, string]>)
        : Object.entries(headers as Record<string, string>);
  const plain: Record<string, string> = {};
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    if (key === 'accept-encoding') return null;
    plain[key] = key in plain ? `${plain[key]}, ${value}` : String(value);
  }
  return plain;
}

/** Statuses whose Response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** `request`'s answer as the Response fetch would give (status, headers, the body as a stream, its url). */
function asResponse(url: URL, answer: Dispatcher.ResponseData): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else if (value !== undefined) headers.append(name, value);
  }
  const empty = NULL_BODY.has(answer.statusCode);
  // Read to its end (there is nothing in it), so the connection goes back to the pool.
  if (empty) answer.body.dump().catch(() => undefined);
  const response = new Response(empty ? null : (Readable.toWeb(answer.body) as ReadableStream<Uint8Array>), {
    status: answer.statusCode,
    statusText: answer.statusText,
    headers,
  });
  Object.defineProperty(response, 'url', { value: url.href });
  return response;
}

/** One guarded fetch with its own connection pool; a hub builds one and closes it when it stops. */
export function createEgressFetch(options: EgressOptions): EgressFetch {
  // The allow list is checked now (a wrong entry stops the start); undici and the pool come with the first call.
  const connector = guardedConnector(options.allowHosts, options.resolve ?? systemResolver);
  let client: Promise<{ agent: Agent; fetch: typeof import('undici').fetch }> | null = null;
  let closed = false;
  const load = () =>
    (client ??= import('undici').then(
      (undici) => {
        const agent = new undici.Agent({ connect: connector(undici.buildConnector) });
        // Closed before its first call: it fails as a closed pool does.
        if (closed) agent.close().catch(() => undefined);
        return { agent, fetch: undici.fetch };
      },
      (error: unknown) => {
        client = null;
        throw error;
      },
    ));
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const call = unpack(input, init);
    const url = httpUrl(call.url);
    const { agent, fetch: undiciFetch } = await load();
    const options = call.init;
    const body = plainBody(options.body);
    const headers = body === undefined ? null : plainHeaders(options.headers);
    try {
      if (body !== undefined && headers !== null) {
        // `request` follows no redirect: a 3xx is returned, as below.
        const signal = options.signal ?? null;
        signal?.throwIfAborted();
        const answer = await agent
          .request({
            origin: url.origin,
            path: `${url.pathname}${url.search}`,
            method: (options.method ?? 'GET').toUpperCase() as Method,
            headers,
            body,
            signal,
          })
          .catch((error: unknown) => {
            // As fetch does: a canceled call rejects with the signal's reason.
            throw signal?.aborted ? signal.reason : error;
          });
        return asResponse(url, answer);
      }
      // A redirect is a second destination, chosen by the server answering: it is returned, not followed.
      const response = await undiciFetch(url, { ...options, redirect: 'manual', dispatcher: agent } as UndiciRequestInit);
      return response as unknown as Response;
    } catch (error) {
      throw egressRefusalIn(error) ?? error;
    }
  };
  const close = async (): Promise<void> => {
    closed = true;
    if (client) await (await client).agent.close();
  };
  return Object.assign(guarded, { close });
}
