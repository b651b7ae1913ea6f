import type { Request, Response } from 'express';
import { isWaiting, type AdmissionCommand, type KernelApi, type RecalledKey, type ResponseState } from '../../../core/api/index.js';
import { PalaiError } from '../../../core/errors/palai-error.js';
import type { CreateResponseRequest, Item, ItemList } from '../../../generated/schemas.js';
import { admissionCommand, admitRequest } from '../openai-request.js';
import { openAiResponse } from '../openai-response.js';
import { statusEvent, type EventVocabulary } from '../openai-status.js';
import type { OperationHandlers } from '../operations.js';
import { settled } from '../settle.js';
import { turnOf, turnView, type Turn } from '../turn-view.js';
import { openEventStream, resumePoint, snapshotFrame, streamResponseEvents } from '../sse.js';

/** The stream vocabulary the client asked for: `palai_events` in the query wins over the `Palai-Events` header. */
function requestedVocabulary(req: Request, query: { palai_events?: EventVocabulary }, fallback: EventVocabulary): EventVocabulary {
  const header = req.get('palai-events');
  if (header !== undefined && header !== 'openai' && header !== 'extended') {
    throw new PalaiError('invalid-request', `Palai-Events must be "openai" or "extended"; got ${JSON.stringify(header.slice(0, 40))}.`);
  }
  return query.palai_events ?? header ?? fallback;
}

/** The waiting response the command answers (see KernelApi responses.answering), with the sequence its stream resumes after. */
async function waitingAnswered(
  api: KernelApi,
  projectId: string,
  command: AdmissionCommand,
  key: RecalledKey | undefined,
): Promise<{ state: ResponseState; after: number } | null> {
  const state = await api.responses.answering(projectId, command, key);
  return state && { state, after: await api.responses.lastSequence(projectId, state.id) };
}

/** A stream of a response that still waits after being answered in part: its state, then how it stands. */
async function stillWaitingStream(api: KernelApi, res: Response, projectId: string, state: ResponseState, vocabulary: EventVocabulary): Promise<void> {
  const sequence = await api.responses.lastSequence(projectId, state.id);
  openEventStream(res);
  res.write(snapshotFrame('response.created', state, sequence));
  res.end(snapshotFrame(statusEvent(state.status, vocabulary), state, sequence));
}

/**
 * Waits for the response to settle (see settle.ts), then answers with it: as the turn shows it when the
 * request answered it, unless it still waits for calls of that turn's start, which the caller must see.
 */
async function answerWhenSettled(api: KernelApi, res: Response, projectId: string, responseId: string, maxMs: number, turn?: Turn): Promise<void> {
  const state = await settled(api, res, projectId, responseId, maxMs);
  const stillAsks =
    turn !== undefined &&
    state.pending_calls.some(
      (call) => !turn.answered.has(call.call_id) && state.output.findIndex((item) => 'call_id' in item && item.call_id === call.call_id) < turn.from,
    );
  res.json(openAiResponse(turn && !stillAsks ? turnView(state, turn) : state));
}

/**
 * One page of a response's input items as OpenAI pages them: newest first unless
 * `order=asc`, resuming after an item's id. An id not among them is a 400.
 */
function inputItemsPage(items: Item[], query: { limit?: number; after?: string; order?: 'asc' | 'desc' }): ItemList {
  const ordered = query.order === 'asc' ? items : [...items].reverse();
  let start = 0;
  if (query.after !== undefined) {
    start = ordered.findIndex((item) => item.id === query.after) + 1;
    if (start === 0) {
      throw new PalaiError('validation-failed', `after ${JSON.stringify(query.after)} is not an input item of this response.`, {
        errors: [{ pointer: '/query/after', detail: 'is not the id of one of its input items' }],
      });
    }
  }
  const data = ordered.slice(start, start + (query.limit ?? 20));
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + data.length < ordered.length };
}

export function responseHandlers(api: KernelApi): OperationHandlers {
  const { responses } = api;
  const syncWaitMs = api.config.syncWaitSeconds * 1000;
  const stream = (res: Response, projectId: string, responseId: string, after: number, vocabulary: EventVocabulary, owned = false) =>
    streamResponseEvents(api, res, projectId, responseId, after, { vocabulary, cancelOnDisconnect: owned });
  return {
    createResponse: async (req, res, { projectId, body, idempotency, replay, key }) => {
      const request = body as CreateResponseRequest;
      const command = admissionCommand(request);
      const vocabulary = requestedVocabulary(req, {}, 'openai');
      const waiting = replay ? null : await waitingAnswered(api, projectId, command, key);
      // A caller that waits (sync or streamed) has its response run in this process when a worker slot is free;
      // a streamed one lasts as long as its caller's connection (see sse.ts).
      const runHere = request.background !== true;
      const state = replay
        ? await responses.get(projectId, replay.resourceId)
        : await admitRequest(api, projectId, request, command, { idempotency, runHere, key });
      const answered = waiting !== null && state.id === waiting.state.id;
      if (request.stream && answered) {
        if (isWaiting(state.status)) return stillWaitingStream(api, res, projectId, state, vocabulary);
        // The resumed run's events as this turn shows them (turn-view.ts), after the snapshot an SDK's stream
        // helper starts from. The snapshot leaves out the asks just answered (approval requests, questions): an
        // SDK (openai 7) that saw one at an output index refuses the next item the run adds there.
        const turn = turnOf(waiting.state);
        return streamResponseEvents(api, res, projectId, state.id, waiting.after, {
          vocabulary,
          snapshot: turnView({ ...waiting.state, pending_calls: [] }, turn),
          cancelOnDisconnect: runHere,
          turn,
          earlierOutput: waiting.state.output,
        });
      }
      if (request.stream) return stream(res, projectId, state.id, -1, vocabulary, runHere);
      if (request.background) return void res.json(openAiResponse(state));
      await answerWhenSettled(api, res, projectId, state.id, syncWaitMs, answered ? turnOf(waiting.state) : undefined);
    },
    getResponse: async (req, res, { projectId, params, query }) => {
      const state = await responses.get(projectId, params.response_id);
      const vocabulary = requestedVocabulary(req, query, 'openai');
      if (query.stream) return stream(res, projectId, state.id, await resumePoint(api, req, projectId, state.id, query.starting_after), vocabulary);
      res.json(openAiResponse(state));
    },
    listResponses: async (_req, res, { projectId, query }) => {
      const { limit, after, order, agent, session_id, status, created_after, created_before } = query;
      const filter = { agent, sessionId: session_id, status, createdAfter: created_after, createdBefore: created_before };
      const page = await responses.list(projectId, filter, { limit, after, order });
      res.json({ ...page, data: page.data.map(openAiResponse) });
    },
    deleteResponse: async (_req, res, { projectId, params }) => {
      await responses.delete(projectId, params.response_id);
      res.json({ id: params.response_id, object: 'response.deleted', deleted: true });
    },
    listResponseInputItems: async (_req, res, { projectId, params, query }) => {
      res.json(inputItemsPage(await responses.inputItems(projectId, params.response_id), query));
    },
    getResponseEvents: async (req, res, { projectId, params, query }) => {
      const state = await responses.get(projectId, params.response_id);
      const vocabulary = requestedVocabulary(req, query, 'extended');
      await stream(res, projectId, state.id, await resumePoint(api, req, projectId, state.id, query.starting_after), vocabulary);
    },
    cancelResponse: async (_req, res, { projectId, params, idempotency, replay }) => {
      if (!replay) await responses.cancel(projectId, params.response_id, { idempotency });
      // A running response stops within one step; give it a moment so the answer is usually final.
      await answerWhenSettled(api, res, projectId, params.response_id, 5_000);
    },
    submitToolOutputs: async (_req, res, { projectId, params, body, idempotency, replay }) => {
      if (!replay) await responses.submitToolOutputs(projectId, params.response_id, body, { idempotency });
      await answerWhenSettled(api, res, projectId, params.response_id, syncWaitMs);
    },
    decideApproval: async (_req, res, { projectId, params, body, idempotency, replay }) => {
      if (!replay) await responses.decideApproval(projectId, params.response_id, body, { idempotency });
      await answerWhenSettled(api, res, projectId, params.response_id, syncWaitMs);
    },
    submitInput: async (_req, res, { projectId, params, body, idempotency, replay }) => {
      if (!replay) await responses.submitInput(projectId, params.response_id, body, { idempotency });
      await answerWhenSettled(api, res, projectId, params.response_id, syncWaitMs);
    },
  };
}
