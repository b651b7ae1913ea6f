import type { Response } from 'express';
import type { KernelApi } from '../../../core/api/index.js';
import { PalaiError } from '../../../core/errors/palai-error.js';
import type { CreateResponseRequest, Item, ItemList } from '../../../generated/schemas.js';
import { openAiResponse } from '../openai-response.js';
import type { OperationHandlers } from '../operations.js';
import { settled } from '../settle.js';
import { resumePoint, streamResponseEvents } from '../sse.js';

/** OpenAI's `conversation` (an id or `{id}`) is Palai's `session_id`; naming two different ones is refused. */
function withSession(request: CreateResponseRequest): CreateResponseRequest {
  const { conversation, ...rest } = request;
  const id = typeof conversation === 'string' ? conversation : conversation?.id;
  if (id === undefined) return rest;
  if (rest.session_id !== undefined && rest.session_id !== id) {
    throw new PalaiError('invalid-request', 'conversation and session_id name different sessions; give one.', { errors: [{ pointer: '/conversation', detail: 'differs from session_id' }] });
  }
  return { ...rest, session_id: id };
}

/** Waits for the response to settle (see settle.ts), then answers with it. */
async function answerWhenSettled(api: KernelApi, res: Response, projectId: string, responseId: string, maxMs: number): Promise<void> {
  res.json(openAiResponse(await settled(api, res, projectId, responseId, maxMs)));
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
  const stream = (res: Response, projectId: string, responseId: string, after: number) => streamResponseEvents(api, res, projectId, responseId, after);
  return {
    createResponse: async (_req, res, { projectId, body, idempotency, replay }) => {
      const request = withSession(body as CreateResponseRequest);
      const state = replay ? await responses.get(projectId, replay.resourceId) : await responses.admit(projectId, request, { idempotency });
      if (request.stream) return stream(res, projectId, state.id, -1);
      if (request.background) return void res.json(openAiResponse(state));
      await answerWhenSettled(api, res, projectId, state.id, syncWaitMs);
    },
    getResponse: async (req, res, { projectId, params, query }) => {
      const state = await responses.get(projectId, params.response_id);
      if (query.stream) return stream(res, projectId, state.id, await resumePoint(api, req, projectId, state.id, query.starting_after));
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
      await stream(res, projectId, state.id, await resumePoint(api, req, projectId, state.id, query.starting_after));
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
