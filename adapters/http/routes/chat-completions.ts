import type { Response } from 'express';
import { isPalaiError, PalaiError } from '../../../core/errors/palai-error.js';
import { isSettled, type KernelApi, type ResponseState } from '../../../core/api/index.js';
import type { ChatCompletionRequest } from '../../../generated/schemas.js';
import { chatChunk, chatCompletion, chatEnding, chatToolCalls, chatUsage, segmentAfter, WHOLE_RESPONSE, type ChatSegment } from '../chat-completions.js';
import { inChatTerms } from '../chat-pointers.js';
import { chatPlan } from '../chat-request.js';
import { admissionCommand, admitRequest } from '../openai-request.js';
import type { OperationHandlers } from '../operations.js';
import { problemBody } from '../problem.js';
import { settled } from '../settle.js';
import { cancelAbandoned, openEventStream } from '../sse.js';

interface ChatStream {
  /** The journal sequence this chat call's events come after (-1: the whole response). */
  after: number;
  segment: ChatSegment;
  includeUsage: boolean;
}

/**
 * Streams the run as chat chunks, read from the journal: the role first, each
 * text delta as it is journaled, the tool calls the run waits for, the finish
 * reason, the usage when asked, then `[DONE]`. A run that ends in a way a chat
 * cannot say ends the stream with an `error` frame, which the OpenAI SDKs raise.
 */
async function streamChat(api: KernelApi, res: Response, projectId: string, state: ResponseState, { after, segment, includeUsage }: ChatStream): Promise<void> {
  const closed = openEventStream(res);
  const signal = AbortSignal.any([closed.signal, api.lifecycle.closing]);
  const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  const none = { finish_reason: null, logprobs: null, index: 0 as const };
  let finished = false;
  try {
    send(chatChunk(state, { ...none, delta: { role: 'assistant', content: '' } }));
    for await (const { event } of api.responses.follow(projectId, state.id, { after, signal })) {
      if (event.type === 'text.delta') send(chatChunk(state, { ...none, delta: { content: event.delta } }));
      if (event.type !== 'status' || !isSettled(event.status)) continue;
      finished = true;
      const finish_reason = chatEnding(event.response);
      if (finish_reason === 'tool_calls') {
        const tool_calls = chatToolCalls(event.response).map((call, index) => ({ index, ...call }));
        send(chatChunk(state, { ...none, delta: { tool_calls } }));
      }
      send(chatChunk(state, { ...none, delta: {}, finish_reason }));
      if (includeUsage) send(chatChunk(state, null, chatUsage(event.response, segment)));
      res.write('data: [DONE]\n\n');
      return;
    }
    if (!closed.signal.aborted)
      throw new PalaiError('shutting-down', `This process is shutting down; response ${state.id} goes on. Fetch it with GET /v1/responses/${state.id}.`);
  } catch (error) {
    if (!isPalaiError(error)) api.logger.error({ err: error, response_id: state.id }, 'chat stream failed');
    const problem = isPalaiError(error)
      ? error
      : new PalaiError('internal', `The stream stopped on an internal error; fetch response ${state.id} with GET /v1/responses/${state.id}.`);
    if (!closed.signal.aborted) send({ error: problemBody(problem).error });
  } finally {
    res.end();
  }
  // A chat is never background: a client that leaves mid-stream stops its run, as with OpenAI.
  if (closed.signal.aborted && !finished) await cancelAbandoned(api, projectId, state.id);
}

export function chatHandlers(api: KernelApi): OperationHandlers {
  const syncWaitMs = api.config.syncWaitSeconds * 1000;
  return {
    createChatCompletion: async (_req, res, { projectId, body, idempotency, replay }) => {
      const chat = body as ChatCompletionRequest;
      const includeUsage = chat.stream_options?.include_usage === true;
      if (replay) {
        // A repeat answers for the same response; which part of it this call covered is not recorded, so all of it.
        const state = await api.responses.get(projectId, replay.resourceId);
        if (chat.stream) return streamChat(api, res, projectId, state, { after: -1, segment: WHOLE_RESPONSE, includeUsage });
        return void res.json(chatCompletion(await settled(api, res, projectId, state.id, syncWaitMs), WHOLE_RESPONSE));
      }
      const plan = await chatPlan(api, projectId, chat);
      const after = plan.answering ? await api.responses.lastSequence(projectId, plan.answering.id) : -1;
      const state = await admitRequest(api, projectId, plan.request, admissionCommand(plan.request), { idempotency }).catch((error: unknown) => {
        throw inChatTerms(error);
      });
      const segment = segmentAfter(plan.answering);
      if (chat.stream) return streamChat(api, res, projectId, state, { after, segment, includeUsage });
      res.json(chatCompletion(await settled(api, res, projectId, state.id, syncWaitMs), segment));
    },
  };
}
