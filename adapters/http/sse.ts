// Server-sent events from the journal: each event's SSE `id` is its sequence
// number, so a client resumes with `Last-Event-ID` or `starting_after`.
//
// A stream the server cannot continue (the database is out, the process is
// shutting down) ends with an `error` event instead of a silent end: it has no
// SSE `id` (so an EventSource's Last-Event-ID stays on the last journaled event)
// and its `sequence_number` is that event's, the point to resume after.
import type { Request, Response } from 'express';
import { once } from 'node:events';
import { isTerminalEvent, isWaitingEvent, type JournalEntry, type KernelApi } from '../../core/api/index.js';
import { isPalaiError, PalaiError } from '../../core/errors/palai-error.js';
import type { ProblemSlug } from '../../core/errors/problem-types.js';
import type { ResponseLifecycleEvent, ResponseStreamEvent, StreamErrorEvent } from '../../generated/schemas.js';
import type { ResponseState } from '../../core/api/index.js';
import { openAiStreamEvent } from './openai-events.js';
import { openAiResponse } from './openai-response.js';
import type { EventVocabulary } from './openai-status.js';
import { markStream } from './request-tracker.js';
import { turnEntry, type Turn } from './turn-view.js';
import { RanCallStream } from './ran-calls.js';

const KEEPALIVE_MS = 15_000;
/** The SSE `retry` hint sent with an error event: how soon an EventSource reconnects. */
const RECONNECT_MS = 2_000;

function errorFrame(code: ProblemSlug, message: string, lastSequence: number): string {
  const event: StreamErrorEvent = { type: 'error', code, message, param: null, sequence_number: lastSequence };
  return `retry: ${RECONNECT_MS}\nevent: error\ndata: ${JSON.stringify(event)}\n\n`;
}

/** The error event for a stream that broke on `error` after sending `last`. */
function failureFrame(api: KernelApi, error: unknown, responseId: string, last: number): string {
  if (isPalaiError(error) && error.slug === 'store-unavailable') {
    return errorFrame('store-unavailable', `The database cannot be reached right now; ${resumeHint(last)} in a moment.`, last);
  }
  if (isPalaiError(error)) return errorFrame(error.slug, error.message, last);
  api.logger.error({ err: error, response_id: responseId }, 'event stream failed');
  return errorFrame('internal', `The stream stopped on an internal error; ${resumeHint(last)}.`, last);
}

const resumeHint = (last: number) => (last >= 0 ? `resume with starting_after=${last} (or Last-Event-ID: ${last})` : 'resume from the start');

/** Starts an event stream: headers sent now, and a signal that aborts when the client goes away. */
export function openEventStream(res: Response): AbortController {
  markStream(res);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  const closed = new AbortController();
  res.on('close', () => closed.abort());
  return closed;
}

/**
 * A lifecycle event that is not journaled (so it has no SSE `id`): what a stream
 * that does not begin with the response's creation sends first, since the SDKs'
 * stream helpers build their snapshot from a `response.created`.
 */
export function snapshotFrame(type: ResponseLifecycleEvent['type'], state: ResponseState, sequence: number): string {
  const event: ResponseLifecycleEvent = { type, sequence_number: Math.max(sequence, 0), response: openAiResponse(state) };
  return `event: ${type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export interface StreamOptions {
  vocabulary: EventVocabulary;
  /** The response as of `after`, announced first as `response.created`. */
  snapshot?: ResponseState;
  /** The run belongs to this connection (a non-background create): cancel it if the client leaves before it ends or waits. */
  cancelOnDisconnect?: boolean;
  /** The stream answers a waiting response: it shows that turn (turn-view.ts). */
  turn?: Turn;
  /** The response's output as of `after`, in full (the snapshot may show less): the calls Palai ran in it. */
  earlierOutput?: ResponseState['output'];
}

/** An entry's SSE frames: one, but for a call Palai ran (ran-calls.ts), whose output may announce its mcp_call. */
function framesOf(entry: JournalEntry, vocabulary: EventVocabulary, ran: RanCallStream): string {
  const shown = ran.project(entry);
  const sequence_number = entry.sequence;
  const events: ResponseStreamEvent[] = shown
    ? shown.map((event): ResponseStreamEvent => {
        if (event.kind === 'completed') return { type: 'response.mcp_call.completed', sequence_number, item_id: event.itemId, output_index: event.outputIndex };
        const type = event.kind === 'added' ? 'response.output_item.added' : 'response.output_item.done';
        return { type, sequence_number, output_index: event.outputIndex, item: event.item };
      })
    : [openAiStreamEvent(entry, vocabulary)];
  return events.map((event) => `id: ${entry.sequence}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

/**
 * What OpenAI does with a streamed, non-background response whose client goes
 * away: the run stops, as cancelled (journaled like any cancel). Never on this
 * process's own shutdown, which closes connections too: the run goes on elsewhere.
 * A run that ended meanwhile is left as it is.
 */
export async function cancelAbandoned(api: KernelApi, projectId: string, responseId: string): Promise<void> {
  if (api.lifecycle.closing.aborted) return;
  try {
    await api.responses.cancel(projectId, responseId);
    api.logger.info({ response_id: responseId }, 'the client left a streamed response: cancelled');
  } catch (error) {
    if (isPalaiError(error) && error.slug === 'invalid-state') return;
    api.logger.warn({ err: error, response_id: responseId }, 'could not cancel a streamed response its client left');
  }
}

export async function streamResponseEvents(
  api: KernelApi,
  res: Response,
  projectId: string,
  responseId: string,
  after: number,
  options: StreamOptions,
): Promise<void> {
  const closed = openEventStream(res);
  if (options.snapshot) res.write(snapshotFrame('response.created', options.snapshot, after));
  const signal = AbortSignal.any([closed.signal, api.lifecycle.closing]);
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  api.metrics.activeStreams.inc();
  let last = after;
  let ended = false;
  let finished = false;
  const ran = new RanCallStream();
  ran.know(options.earlierOutput ?? []);
  try {
    for await (const entry of api.responses.follow(projectId, responseId, { after, signal })) {
      last = entry.sequence;
      ended = isTerminalEvent(entry.event);
      finished = ended || isWaitingEvent(entry.event);
      if (entry.event.type === 'status') ran.know(entry.event.response.output);
      const shown = options.turn ? turnEntry(entry, options.turn) : entry;
      if (!shown) continue;
      const frame = framesOf(shown, options.vocabulary, ran);
      if (frame === '') continue;
      // A write after the client left returns false too, and then neither 'drain' nor 'close' comes again: wait on the signal.
      if (!res.write(frame) && !signal.aborted) await once(res, 'drain', { signal }).catch(() => undefined);
      if (signal.aborted) break;
    }
    if (api.lifecycle.closing.aborted && !closed.signal.aborted && !ended) {
      res.write(errorFrame('shutting-down', `This server is shutting down; ${resumeHint(last)} on another one.`, last));
    }
  } catch (error) {
    // The headers are sent: the only way left to say what happened is an event (if anyone listens).
    if (!closed.signal.aborted) res.write(failureFrame(api, error, responseId, last));
  } finally {
    api.metrics.activeStreams.dec();
    clearInterval(keepalive);
    res.end();
  }
  if (options.cancelOnDisconnect && closed.signal.aborted && !finished) await cancelAbandoned(api, projectId, responseId);
}

/** Sequence numbers are PostgreSQL integers. */
const MAX_SEQUENCE = 2_147_483_647;

/**
 * The sequence to resume after: `starting_after` wins over `Last-Event-ID`; -1
 * replays everything. Any other value must be the id of an event journaled by
 * now: resuming after one not written yet would silently skip the events up to
 * it, or wait for ones that never come, so it is refused.
 */
export async function resumePoint(api: KernelApi, req: Request, projectId: string, responseId: string, startingAfter: number | undefined): Promise<number> {
  const header = req.get('last-event-id');
  let after: number;
  if (startingAfter !== undefined) after = startingAfter;
  // An EventSource sends no Last-Event-ID while its last id is empty: empty means none.
  else if (header === undefined || header === '') return -1;
  else if (/^(-1|\d{1,10})$/.test(header)) after = Number(header);
  else
    throw new PalaiError(
      'invalid-request',
      `Last-Event-ID must be the id of an event of this stream (a sequence number), or -1 to replay it all; got ${JSON.stringify(header.slice(0, 40))}.`,
    );
  if (after === -1) return -1;
  // The first event from `after` on: `after` itself, or, in a compacted journal (retention keeps only
  // the terminal event), a later one — `after` was journaled then, and the reader resumes past it.
  const [entry] = after <= MAX_SEQUENCE ? await api.responses.events(projectId, responseId, after - 1, 1) : [];
  if (entry) return after;
  const detail = `is beyond the last event of response ${responseId} journaled so far; resume after an id the stream has sent, or from -1`;
  if (startingAfter === undefined) throw new PalaiError('invalid-request', `Last-Event-ID ${after} ${detail}.`);
  throw new PalaiError('validation-failed', `starting_after ${after} ${detail}.`, { errors: [{ pointer: '/query/starting_after', detail }] });
}
