// A response's events as an async iterator that outlives its connection: each
// event's sequence number is remembered, and a stream that breaks (a cut
// connection, a server that stopped mid-stream with an `error` frame, a proxy
// closing an idle stream) is resumed with `starting_after` on whichever
// process answers, so the caller sees every event once and in order. It ends
// when the server closes the stream at a settled response: finished, or
// waiting for its caller.
import { PalaiApiError, PalaiConnectionError } from './errors.js';
import type { CreateResponseRequest, ResponseStatus, ResponseStreamEvent, ResponseStreamFrame, StreamErrorEvent } from './generated/schemas.js';
import { backoffMs, newIdempotencyKey, sleep, type RetryOptions } from './retry.js';
import { readSse } from './sse.js';

/** How the client reaches the hub: its base URL and its authenticated, retrying fetch. */
export interface Transport {
  baseUrl: string;
  send(request: Request): Promise<Response>;
  retry: Required<RetryOptions>;
}

export interface FollowOptions {
  /** Replay the events after this sequence number (default -1: all of them). */
  startingAfter?: number;
  signal?: AbortSignal;
  /** `extended` (the default: Palai's whole journal) or `openai` (what OpenAI's clients know). */
  vocabulary?: 'extended' | 'openai';
}

export interface StreamCreateOptions {
  signal?: AbortSignal;
  vocabulary?: 'extended' | 'openai';
  /** Sent as Idempotency-Key (default: a new random key); the resumed or retried request uses it too. */
  idempotencyKey?: string;
}

/** The lifecycle events after which the server ends a stream. */
const SETTLING_EVENTS = new Set<string>([
  'response.completed',
  'response.failed',
  'response.incomplete',
  'response.cancelled',
  'response.waiting_for_approval',
  'response.waiting_for_tool',
  'response.waiting_for_input',
]);

/** The kernel states in which nothing runs until somebody acts (or ever again). */
export const SETTLED_STATUSES: ReadonlySet<ResponseStatus> = new Set<ResponseStatus>([
  'completed',
  'failed',
  'canceled',
  'timed_out',
  'budget_exceeded',
  'waiting_for_approval',
  'waiting_for_tool',
  'waiting_for_input',
]);

/** Where a stream has got to: what a resume needs. */
interface Progress {
  responseId: string | undefined;
  last: number;
  settled: boolean;
  /** The server's own last frame, when it stopped the stream. */
  stopped: StreamErrorEvent | undefined;
}

/** Yields the journaled events of one connection; leaves in `progress` how it ended. */
async function* consume(response: Response, progress: Progress, signal: AbortSignal | undefined): AsyncGenerator<ResponseStreamEvent> {
  progress.stopped = undefined;
  try {
    for await (const frame of readSse(response.body!)) {
      const payload = JSON.parse(frame.data) as ResponseStreamFrame;
      if (payload.type === 'error') {
        progress.stopped = payload;
        return;
      }
      const event = payload as ResponseStreamEvent;
      if (event.sequence_number <= progress.last) continue;
      progress.last = event.sequence_number;
      progress.settled = SETTLING_EVENTS.has(event.type);
      if ('response' in event && progress.responseId === undefined) progress.responseId = event.response.id;
      yield event;
    }
  } catch (error) {
    if (signal?.aborted) throw signal.reason ?? error;
    if (error instanceof SyntaxError) throw error;
    // The connection broke: the caller resumes from progress.last.
  }
}

/** After a connection that did not end at a settled response: wait before the next, or give up. */
async function beforeResume(transport: Transport, progress: Progress, failures: number, signal: AbortSignal | undefined): Promise<void> {
  if (failures > transport.retry.maxRetries) {
    const why = progress.stopped ? `the server stopped it (${progress.stopped.code}: ${progress.stopped.message})` : 'the connection broke';
    throw new PalaiConnectionError(`the event stream of ${progress.responseId ?? 'the response'} ended ${failures} times without progress; ${why}`);
  }
  await sleep(backoffMs(failures - 1, transport.retry), signal);
}

function streamRequest(transport: Transport, path: string, init: RequestInit & { vocabulary?: string }): Request {
  const headers = new Headers(init.headers);
  headers.set('accept', 'text/event-stream');
  headers.set('palai-events', init.vocabulary ?? 'extended');
  return new Request(`${transport.baseUrl}${path}`, { ...init, headers });
}

async function open(transport: Transport, request: Request): Promise<Response> {
  const response = await transport.send(request);
  if (!response.ok) throw await PalaiApiError.fromResponse(response);
  if (!response.body) throw new PalaiConnectionError(`${request.method} ${request.url} answered without a body`);
  return response;
}

/** Follows a response's journal from `progress.last`, resuming until it settles. */
async function* resume(transport: Transport, progress: Progress, options: FollowOptions): AsyncGenerator<ResponseStreamEvent> {
  const id = progress.responseId!;
  let failures = 0;
  for (;;) {
    const path = `/v1/responses/${encodeURIComponent(id)}/events?starting_after=${progress.last}`;
    const before = progress.last;
    let response: Response | undefined;
    try {
      response = await open(transport, streamRequest(transport, path, { signal: options.signal, vocabulary: options.vocabulary }));
    } catch (error) {
      if (!(error instanceof PalaiConnectionError)) throw error;
    }
    if (response) yield* consume(response, progress, options.signal);
    if (progress.settled && !progress.stopped) return;
    failures = progress.last > before ? 1 : failures + 1;
    await beforeResume(transport, progress, failures, options.signal);
  }
}

/** Every event of response `id` after `startingAfter`, live, until it settles. */
export function followResponse(transport: Transport, id: string, options: FollowOptions = {}): AsyncGenerator<ResponseStreamEvent> {
  return resume(transport, { responseId: id, last: options.startingAfter ?? -1, settled: false, stopped: undefined }, options);
}

/**
 * Creates a response with `stream: true` and yields its events until it
 * settles. It is `background: true` unless the body says otherwise: the hub
 * cancels a foreground streamed run whose connection goes (as OpenAI does), a
 * background one goes on, so a broken connection loses nothing. A stream cut
 * before the first event is sent again with the same Idempotency-Key (the hub
 * answers for the same response); one cut later is resumed from the journal.
 */
export async function* streamResponse(
  transport: Transport,
  body: CreateResponseRequest,
  options: StreamCreateOptions = {},
): AsyncGenerator<ResponseStreamEvent> {
  const key = options.idempotencyKey ?? newIdempotencyKey();
  const progress: Progress = { responseId: undefined, last: -1, settled: false, stopped: undefined };
  for (let failures = 1; progress.responseId === undefined; failures++) {
    const request = streamRequest(transport, '/v1/responses', {
      method: 'POST',
      body: JSON.stringify({ background: true, ...body, stream: true }),
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      signal: options.signal,
      vocabulary: options.vocabulary,
    });
    let response: Response | undefined;
    try {
      response = await open(transport, request);
    } catch (error) {
      if (!(error instanceof PalaiConnectionError)) throw error;
    }
    if (response) yield* consume(response, progress, options.signal);
    if (progress.settled && !progress.stopped) return;
    if (progress.responseId === undefined) await beforeResume(transport, progress, failures, options.signal);
  }
  yield* resume(transport, progress, options);
}
