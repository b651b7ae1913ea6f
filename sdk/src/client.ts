// The client: openapi-fetch over the generated types, so every operation of
// openapi/palai.yaml is typed (a wrong field fails `tsc`), and beside it the
// few things a generated client cannot know: the API key, retries that never
// run a response twice, problems as errors, resumable streams, and waiting
// for a response to settle.
import createClient, { type Client, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { HttpMethod, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import { PalaiApiError } from './errors.js';
import type { paths } from './generated/openapi.js';
import type { CreateResponseRequest, Response as PalaiResponse, ResponseStreamEvent } from './generated/schemas.js';
import { newIdempotencyKey, retryDefaults, retryingFetch, type RetryOptions } from './retry.js';
import { followResponse, SETTLED_STATUSES, streamResponse, type FollowOptions, type StreamCreateOptions, type Transport } from './stream.js';

export interface PalaiOptions {
  /** The hub's address, e.g. `http://localhost:8080` (a trailing `/v1` is allowed). */
  baseUrl: string;
  /** A project API key (`palai_sk_…`). */
  apiKey: string;
  retry?: RetryOptions;
  /** Another fetch (a test double, a proxy agent); the global one by default. */
  fetch?: typeof fetch;
  /** Sent with every request. */
  headers?: Record<string, string>;
}

type Media = `${string}/json`;
type Init<P extends keyof paths, M extends HttpMethod> = MaybeOptionalInit<paths[P], M>;
/** openapi-fetch's rule for whether the options argument may be left out. */
type InitArgs<I> = RequiredKeysOf<I> extends never ? [(I & { [key: string]: unknown })?] : [I & { [key: string]: unknown }];
/** What a successful call answers: the operation's 2xx JSON body. */
export type Answer<P extends keyof paths, M extends HttpMethod, I> = paths[P][M] extends infer O extends Record<string | number, any>
  ? NonNullable<FetchResponse<O, I, Media>['data']>
  : never;
type Call<M extends HttpMethod> = <P extends PathsWithMethod<paths, M>, I extends Init<P, M>>(path: P, ...init: InitArgs<I>) => Promise<Answer<P, M, I>>;

export interface WaitOptions {
  signal?: AbortSignal;
  /** Give up (the promise rejects with a TimeoutError) after this long. */
  timeoutMs?: number;
}

export interface Palai {
  /** openapi-fetch's client itself: `{data, error, response}` answers, nothing thrown for a problem. */
  readonly api: Client<paths, Media>;
  /** The operation's answer; a problem is thrown as a PalaiApiError. */
  readonly GET: Call<'get'>;
  readonly POST: Call<'post'>;
  readonly PATCH: Call<'patch'>;
  readonly DELETE: Call<'delete'>;
  readonly responses: {
    /** Runs an agent with `stream: true` (and `background: true` unless given): its events until it settles, resumed across broken connections. */
    stream(body: Omit<CreateResponseRequest, 'stream'>, options?: StreamCreateOptions): AsyncGenerator<ResponseStreamEvent>;
    /** A response's events after `startingAfter`, live until it settles. */
    follow(id: string, options?: FollowOptions): AsyncGenerator<ResponseStreamEvent>;
    /** The response once it is finished or waits for its caller (an approval, a tool output, an answer). */
    wait(id: string, options?: WaitOptions): Promise<PalaiResponse>;
  };
}

function normalizeBaseUrl(raw: string): string {
  return raw.replace(/\/+$/, '').replace(/\/v1$/, '');
}

export function createPalai(options: PalaiOptions): Palai {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  const retry = retryDefaults(options.retry);
  const retrying = retryingFetch(options.fetch ?? ((input, init) => globalThis.fetch(input, init)), retry);
  const send = (request: Request) => {
    request.headers.set('authorization', `Bearer ${options.apiKey}`);
    for (const [name, value] of Object.entries(options.headers ?? {})) if (!request.headers.has(name)) request.headers.set(name, value);
    if (request.method === 'POST' && !request.headers.has('idempotency-key')) request.headers.set('idempotency-key', newIdempotencyKey());
    return retrying(request);
  };
  const transport: Transport = { baseUrl, send, retry };
  const api = createClient<paths, Media>({ baseUrl, fetch: send });

  const call =
    <M extends HttpMethod>(method: M): Call<M> =>
    async (path, ...init) => {
      const answer = (await api.request(method, path as never, ...(init as [never]))) as { data?: unknown; error?: unknown; response: Response };
      if (!answer.response.ok) throw PalaiApiError.fromBody(answer.response, answer.error);
      return answer.data as never;
    };

  const wait = async (id: string, waitOptions: WaitOptions = {}): Promise<PalaiResponse> => {
    const signals = [waitOptions.signal, waitOptions.timeoutMs === undefined ? undefined : AbortSignal.timeout(waitOptions.timeoutMs)].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    const signal = signals.length > 0 ? AbortSignal.any(signals) : undefined;
    const read = () => call('get')('/v1/responses/{response_id}', { params: { path: { response_id: id } }, signal });
    const now = await read();
    if (SETTLED_STATUSES.has(now.palai_status)) return now;
    for await (const event of followResponse(transport, id, { signal })) void event;
    return read();
  };

  return {
    api,
    GET: call('get'),
    POST: call('post'),
    PATCH: call('patch'),
    DELETE: call('delete'),
    responses: {
      stream: (body, streamOptions) => streamResponse(transport, body as CreateResponseRequest, streamOptions),
      follow: (id, followOptions) => followResponse(transport, id, followOptions),
      wait,
    },
  };
}
