// The Chat Completions projection of a response (chat-request.ts makes the
// response): its state and journal become OpenAI's chat.completion and
// chat.completion.chunk objects. A run waiting for the caller's functions is a
// completion with tool calls; what a chat cannot say — a failed run, a run
// waiting for a decision or an answer — is an error naming the response, which
// stays readable under /v1/responses.
import { outputText, type ResponseState } from '../../core/api/index.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { problemTypes, type ProblemSlug } from '../../core/errors/problem-types.js';
import type { ChatCompletion, ChatCompletionChunk, ChatFinishReason, ChatToolCall, ChatUsage } from '../../generated/schemas.js';

/** Where this chat call's part of the response begins: a resumed response answered earlier calls already. */
export interface ChatSegment {
  outputIndex: number;
  steps: number;
}

export const WHOLE_RESPONSE: ChatSegment = { outputIndex: 0, steps: 0 };

/** The segment a chat call that answers `waiting` covers: what the run did after it waited. */
export const segmentAfter = (waiting: ResponseState | null): ChatSegment =>
  waiting ? { outputIndex: waiting.output.length, steps: waiting.usage_by_step.length } : WHOLE_RESPONSE;

/** The tokens of the model steps of this segment. */
export function chatUsage(state: ResponseState, segment: ChatSegment): ChatUsage {
  const steps = state.usage_by_step.slice(segment.steps);
  const prompt_tokens = steps.reduce((sum, step) => sum + step.input_tokens, 0);
  const completion_tokens = steps.reduce((sum, step) => sum + step.output_tokens, 0);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

/** The client function calls the response waits for, as the chat's tool calls. */
export function chatToolCalls(state: ResponseState): ChatToolCall[] {
  return state.pending_calls
    .filter((call) => call.waiting_for === 'tool_output')
    .map((call) => ({ id: call.call_id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
}

/**
 * How a settled response ends a chat: a finish reason, or the error to raise.
 * A run cut by its limits answers what it has with `length`.
 */
export function chatEnding(state: ResponseState): ChatFinishReason {
  switch (state.status) {
    case 'completed':
      return 'stop';
    case 'timed_out':
    case 'budget_exceeded':
      return 'length';
    case 'failed': {
      const code = state.error?.code;
      const slug = (code !== undefined && code in problemTypes ? code : 'internal') as ProblemSlug;
      throw new PalaiError(slug, state.error?.message ?? `Response ${state.id} failed.`, { extensions: { response_id: state.id } });
    }
    case 'canceled':
      throw new PalaiError('invalid-state', `Response ${state.id} was cancelled before it answered.`, { extensions: { response_id: state.id } });
    case 'waiting_for_tool':
    case 'waiting_for_approval':
    case 'waiting_for_input':
      // The caller's own functions are the chat's tool calls; a decision or an answer a chat cannot ask for.
      if (state.status === 'waiting_for_tool') return 'tool_calls';
      throw new PalaiError(
        'invalid-state',
        `Response ${state.id} is ${state.status}, which a chat completion cannot express; answer it through /v1/responses/${state.id}.`,
        {
          extensions: { response_id: state.id },
        },
      );
    case 'queued':
    case 'in_progress':
    case 'parked':
      throw new PalaiError('invalid-state', `Response ${state.id} is still running; fetch it later with GET /v1/responses/${state.id}.`, {
        extensions: { response_id: state.id },
      });
    default: {
      const unknown: never = state.status;
      throw new Error(`unknown status ${unknown}`);
    }
  }
}

export function chatCompletion(state: ResponseState, segment: ChatSegment): ChatCompletion {
  const finish_reason = chatEnding(state);
  const text = outputText(state.output.slice(segment.outputIndex));
  const calls = finish_reason === 'tool_calls' ? chatToolCalls(state) : [];
  const message = {
    role: 'assistant' as const,
    content: text === '' && calls.length > 0 ? null : text,
    refusal: null,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
  return {
    id: state.id,
    object: 'chat.completion',
    created: state.created_at,
    model: state.agent.name,
    choices: [{ index: 0, message, finish_reason, logprobs: null }],
    usage: chatUsage(state, segment),
  };
}

/** A chunk of the stream; `choice` null for the usage-only chunk. */
export function chatChunk(
  state: Pick<ResponseState, 'id' | 'created_at' | 'agent'>,
  choice: ChatCompletionChunk['choices'][number] | null,
  usage?: ChatUsage,
): ChatCompletionChunk {
  return {
    id: state.id,
    object: 'chat.completion.chunk',
    created: state.created_at,
    model: state.agent.name,
    choices: choice ? [choice] : [],
    ...(usage ? { usage } : {}),
  };
}
