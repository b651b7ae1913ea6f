// The Chat Completions projection: a chat request becomes a Palai response
// (system and developer messages join the instructions, the rest is the
// conversation), and the response's state and journal become OpenAI's
// chat.completion and chat.completion.chunk objects. What a chat cannot say —
// a failed run, a run waiting for someone — is an error naming the response,
// which stays readable under /v1/responses.
import { outputText, type ResponseState } from '../../core/api/index.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { problemTypes, type ProblemSlug } from '../../core/errors/problem-types.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatFinishReason,
  ChatMessage,
  ChatUsage,
  CreateResponseRequest,
  InputMessage,
} from '../../generated/schemas.js';

/** Refuses what this projection cannot carry yet, naming the field, instead of dropping it. */
function refuseUnsupported(request: ChatCompletionRequest): void {
  const refuse = (pointer: string, detail: string) => {
    throw new PalaiError('invalid-request', `${pointer.slice(1).replace(/\//g, '.')} ${detail}`, { errors: [{ pointer, detail }] });
  };
  if (request.tools && request.tools.length > 0) refuse('/tools', 'is not supported on /v1/chat/completions yet; give the agent its tools, or use /v1/responses with function tools');
  const format = (request.response_format as { type?: string } | null | undefined)?.type;
  if (format !== undefined && format !== 'text') refuse('/response_format', 'other than text is not supported yet; give the agent an output_schema');
  if ((request.n ?? 1) !== 1) refuse('/n', 'must be 1: an agent run has one answer');
  request.messages.forEach((message, index) => {
    if (message.role === 'tool' || (message.tool_calls && message.tool_calls.length > 0)) {
      refuse(`/messages/${index}`, 'carries tool calls or a tool result, which need client tools (not supported on this endpoint yet)');
    }
  });
}

const textOf = (message: ChatMessage): string =>
  typeof message.content === 'string' ? message.content : (message.content ?? []).map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');

/** The response request a chat request stands for. */
export function responseRequestFor(request: ChatCompletionRequest): CreateResponseRequest {
  refuseUnsupported(request);
  const instructions = request.messages.filter((m) => m.role === 'system' || m.role === 'developer').map(textOf);
  const input: InputMessage[] = request.messages
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => ({ role: m.role as 'user' | 'assistant', content: textOf(m) }));
  if (input.length === 0) {
    throw new PalaiError('invalid-request', 'messages holds no user or assistant message to answer.', { errors: [{ pointer: '/messages', detail: 'has no user or assistant message' }] });
  }
  return {
    model: request.model,
    input,
    ...(instructions.length > 0 ? { instructions: instructions.join('\n\n') } : {}),
    ...(request.metadata ? { metadata: request.metadata } : {}),
  };
}

export function chatUsage(state: ResponseState): ChatUsage {
  const usage = state.usage;
  return { prompt_tokens: usage?.input_tokens ?? 0, completion_tokens: usage?.output_tokens ?? 0, total_tokens: usage?.total_tokens ?? 0 };
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
    case 'waiting_for_approval':
    case 'waiting_for_tool':
    case 'waiting_for_input':
      throw new PalaiError('invalid-state', `Response ${state.id} is ${state.status}, which a chat completion cannot express; answer it through /v1/responses/${state.id}.`, {
        extensions: { response_id: state.id },
      });
    case 'queued':
    case 'in_progress':
      throw new PalaiError('invalid-state', `Response ${state.id} is still running; fetch it later with GET /v1/responses/${state.id}.`, { extensions: { response_id: state.id } });
    default: {
      const unknown: never = state.status;
      throw new Error(`unknown status ${unknown}`);
    }
  }
}

export function chatCompletion(state: ResponseState): ChatCompletion {
  const finish_reason = chatEnding(state);
  return {
    id: state.id,
    object: 'chat.completion',
    created: state.created_at,
    model: state.agent.name,
    choices: [{ index: 0, message: { role: 'assistant', content: outputText(state.output), refusal: null }, finish_reason, logprobs: null }],
    usage: chatUsage(state),
  };
}

/** A chunk of the stream; `choice` null for the usage-only chunk. */
export function chatChunk(state: Pick<ResponseState, 'id' | 'created_at' | 'agent'>, choice: ChatCompletionChunk['choices'][number] | null, usage?: ChatUsage): ChatCompletionChunk {
  return {
    id: state.id,
    object: 'chat.completion.chunk',
    created: state.created_at,
    model: state.agent.name,
    choices: choice ? [choice] : [],
    ...(usage ? { usage } : {}),
  };
}
