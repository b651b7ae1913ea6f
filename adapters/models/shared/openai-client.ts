// One OpenAI SDK client per connection (credentials, transport and timeout),
// built only from the broker's resolution (the kernel's egress-guarded fetch,
// which follows no redirect), and the guard every streamed call runs through:
// the kernel owns retries, the caller's signal cancels the HTTP request, and
// silence from the provider times out. The SDK builds each endpoint's request
// once per client (its URL and headers: they do not change between calls) and
// its errors are the ones a refused call throws; the call itself, and the event
// stream it answers (sse-decoder.ts), are sent and read here, as the SDK does
// but without its per-request layers, which cost more CPU than the call.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { ModelProviderError, transportRefusal, type ModelCredentials, type ModelRequest } from '../../../core/models/model-port.js';
import { toProviderError } from './openai-errors.js';
import { SseDecoder } from './sse-decoder.js';

/** Sent when the connection has no key: local servers ignore it, and the SDK refuses to run without one. */
export const NO_API_KEY = 'palai-no-key';
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** Default of the adapters' `timeoutMs`: how long the provider may stay silent. */
export const DEFAULT_TIMEOUT_MS = 120_000;

export function openAIClient(credentials: ModelCredentials, transport: ModelRequest['transport'], timeoutMs: number): OpenAI {
  // Every option the SDK would otherwise read from OPENAI_* environment variables is set,
  // so the broker's resolution is the only source of where and as whom we call.
  return new OpenAI({
    apiKey: credentials.apiKey ?? NO_API_KEY,
    baseURL: credentials.baseUrl ?? OPENAI_BASE_URL,
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: 0,
    timeout: timeoutMs,
    fetch: transport,
  });
}

/** A client and the requests it built, by path: the URL and headers every call to that endpoint sends. */
interface SharedClient {
  sdk: OpenAI;
  endpoints: Map<string, Promise<Endpoint>>;
}

interface Endpoint {
  url: string;
  headers: Record<string, string>;
}

/** The clients in use, by transport, then key, base URL and timeout: building one costs more than the call's own work. */
const clients = new WeakMap<ModelRequest['transport'], Map<string, SharedClient>>();
const CLIENTS_PER_TRANSPORT = 64;

function sharedClient(credentials: ModelCredentials, transport: ModelRequest['transport'], timeoutMs: number): SharedClient {
  let byKey = clients.get(transport);
  if (!byKey) clients.set(transport, (byKey = new Map()));
  const key = `${timeoutMs}\n${credentials.baseUrl ?? ''}\n${credentials.apiKey ?? ''}`;
  let client = byKey.get(key);
  if (client) {
    // Most recently used last, so the oldest is the first to go.
    byKey.delete(key);
  } else {
    client = { sdk: openAIClient(credentials, transport, timeoutMs), endpoints: new Map() };
    if (byKey.size >= CLIENTS_PER_TRANSPORT) byKey.delete(byKey.keys().next().value!);
  }
  byKey.set(key, client);
  return client;
}

/**
 * Aborts when a wait on the provider lasts longer than `ms`: for the response's
 * headers, then for each read of its body (a stream may stall after its headers).
 */
class SilenceTimer {
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;

  constructor(private readonly ms: number) {}

  get fired(): boolean {
    return this.signal.aborted;
  }

  async wait<T>(promise: Promise<T>): Promise<T> {
    const timer = setTimeout(() => this.controller.abort(), this.ms);
    try {
      return await promise;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The SDK's request to `path` (a streamed POST), as it would send it: built once per client and path. */
function endpoint(client: SharedClient, path: string): Promise<Endpoint> {
  let built = client.endpoints.get(path);
  if (!built) {
    built = client.sdk.buildRequest({ method: 'post', path, body: {}, stream: true }).then(({ req, url }) => ({
      url,
      headers: Object.fromEntries(new Headers(req.headers).entries()),
    }));
    // A request that could not be built is built again next time (and fails as the SDK's call would).
    built.catch(() => client.endpoints.delete(path));
    client.endpoints.set(path, built);
  }
  return built;
}

/** A streamed call: the API path under the base URL, and its JSON body. */
export interface StreamedCall {
  path: string;
  body: object;
}

/**
 * Sends the call as the SDK sends it, and answers its response once the status
 * is a success. Otherwise throws what the SDK throws: APIError.generate's error
 * for the status and body, APIConnectionTimeoutError or APIConnectionError
 * (the transport's error as its cause) when no response came.
 */
async function send(client: SharedClient, transport: ModelRequest['transport'], call: StreamedCall, signal: AbortSignal): Promise<Response> {
  const { url, headers } = await endpoint(client, call.path);
  let response: Response;
  try {
    response = await transport(url, { method: 'POST', headers, body: JSON.stringify(call.body), signal });
  } catch (error) {
    const cause = error instanceof Error ? error : new Error(String(error));
    if (/timed? ?out/i.test(`${String(cause)}${String(cause.cause ?? '')}`)) throw Object.assign(new APIConnectionTimeoutError(), { cause });
    throw new APIConnectionError({ cause });
  }
  if (response.ok) return response;
  const text = await response.text().catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
  let json: object | undefined;
  try {
    json = JSON.parse(text) as object;
  } catch {
    json = undefined;
  }
  throw APIError.generate(response.status, json, json ? undefined : text, response.headers);
}

export interface GuardedCall {
  provider: string;
  credentials: ModelCredentials;
  transport: ModelRequest['transport'];
  timeoutMs: number;
  signal: AbortSignal;
}

/** How long the end of the body may take to come after `[DONE]` before its request is closed. */
const DONE_GRACE_MS = 50;

/**
 * The events of one streamed call, each the JSON of one server-sent event, as
 * the SDK's stream yields them: up to `data: [DONE]`, an `error` event or a
 * payload with `error` thrown as the SDK's APIError, malformed JSON as its
 * SyntaxError. Throws the caller's abort reason unwrapped when it cancels, the
 * transport's egress refusal as it is, and ModelProviderError for everything
 * the provider or network did. A stream that merely ends is returned as ended:
 * the caller judges whether it was complete.
 */
export async function* guardedStream<T>(call: GuardedCall, streamed: StreamedCall): AsyncGenerator<T> {
  const silence = new SilenceTimer(call.timeoutMs);
  const signal = AbortSignal.any([call.signal, silence.signal]);
  const failure = (error: unknown): unknown => {
    // The transport and the body's reader report an abort as an AbortError.
    if (call.signal.aborted) return call.signal.reason;
    if (silence.fired) return new ModelProviderError(call.provider, `no answer for ${call.timeoutMs / 1000}s; the request timed out`);
    return transportRefusal(error) ?? toProviderError(call.provider, error, call.credentials.apiKey);
  };

  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let ended = false;
  try {
    call.signal.throwIfAborted();
    const response = await silence.wait(send(sharedClient(call.credentials, call.transport, call.timeoutMs), call.transport, streamed, signal));
    if (!response.body) throw new Error('Attempted to iterate over a response with no body');
    reader = response.body.getReader();
    const text = new TextDecoder();
    const sse = new SseDecoder();
    for (;;) {
      const next = await silence.wait(reader.read());
      const events = next.done ? [...sse.decode(text.decode()), ...sse.flush()] : sse.decode(text.decode(next.value, { stream: true }));
      for (const event of events) {
        if (event.data === '[DONE]') {
          ended = true;
          closeAfterDone(reader);
          return;
        }
        yield eventData<T>(event, response.headers);
      }
      if (next.done) {
        ended = true;
        break;
      }
    }
  } catch (error) {
    throw failure(error);
  } finally {
    // The consumer stopped early, something threw, or the body did not end: close the HTTP request.
    if (!ended) reader?.cancel().catch(() => undefined);
  }
  if (call.signal.aborted || silence.fired) throw failure(undefined);
}

/** One event's JSON, or the SDK's error for it. */
function eventData<T>(event: { event: string | null; data: string }, headers: Headers): T {
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    throw new SyntaxError('Error reading response: malformed server-sent event JSON.');
  }
  const payload = data as { error?: unknown } | null;
  if (event.event === 'error') throw new APIError(undefined, (payload?.error ?? payload) as object, undefined, headers);
  if (payload?.error) throw new APIError(undefined, payload.error as object, undefined, headers);
  return data as T;
}

/**
 * After `[DONE]`, the rest of the body is left to end on its own, so its
 * connection serves the next call; nothing more is read from it, and if it has
 * not ended within DONE_GRACE_MS (or sends more) the request is closed.
 */
function closeAfterDone(reader: ReadableStreamDefaultReader<Uint8Array>): void {
  const close = () => void reader.cancel().catch(() => undefined);
  const late = setTimeout(close, DONE_GRACE_MS);
  late.unref();
  reader.read().then(
    (next) => {
      clearTimeout(late);
      if (!next.done) close();
    },
    () => clearTimeout(late),
  );
}

/** Tool call arguments as JSON text; servers send '' for a call without arguments. */
export const toolArguments = (text: string | null | undefined): string => (text && text.trim() !== '' ? text : '{}');

/** The name OpenAI requires for a JSON Schema output format (^[a-zA-Z0-9_-]{1,64}$). */
export function outputFormatName(schema: Record<string, unknown>): string {
  const title = typeof schema.title === 'string' ? schema.title.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64) : '';
  return title.replace(/^_+|_+$/g, '') || 'output';
}
