// A Chat Completions request as a Palai response request. Chat is stateless:
// the client sends the whole conversation each time. When it ends with `tool`
// messages answering the calls a response waits for, those answers resume that
// response (the same durable run); otherwise the conversation is the input of a
// new response, the request's tools its client functions.
import type { KernelApi, ResponseState } from '../../core/api/index.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type {
  ChatCompletionRequest,
  ChatMessage,
  CreateResponseRequest,
  InputFunctionCallOutput,
  RequestFunctionTool,
  ResponseInputItem,
  TextFormat,
  ToolChoice,
} from '../../generated/schemas.js';

/** What a chat request runs: the response request, and the waiting response it answers (if any). */
export interface ChatPlan {
  request: CreateResponseRequest;
  answering: ResponseState | null;
}

const refuse = (pointer: string, detail: string): never => {
  throw new PalaiError('invalid-request', `${pointer.slice(1).replace(/\//g, '.')} ${detail}`, { errors: [{ pointer, detail }] });
};

export const chatText = (message: ChatMessage): string =>
  typeof message.content === 'string' ? message.content : (message.content ?? []).map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');

function toolResult(message: ChatMessage, index: number): InputFunctionCallOutput {
  if (!message.tool_call_id) refuse(`/messages/${index}/tool_call_id`, 'is required on a tool message');
  return { type: 'function_call_output', call_id: message.tool_call_id!, output: chatText(message) };
}

/** The conversation as response input items: messages, the assistant's tool calls, and their results. */
function conversationItems(messages: ChatMessage[]): ResponseInputItem[] {
  return messages.flatMap((message, index): ResponseInputItem[] => {
    switch (message.role) {
      case 'system':
      case 'developer':
        return [];
      case 'user':
        return [{ role: 'user', content: chatText(message) }];
      case 'tool':
        return [toolResult(message, index)];
      case 'assistant': {
        const text = chatText(message);
        const calls = (message.tool_calls ?? []).map((call) => ({
          type: 'function_call' as const,
          call_id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        }));
        return [...(text !== '' || calls.length === 0 ? [{ role: 'assistant' as const, content: text }] : []), ...calls];
      }
    }
  });
}

function tools(chat: ChatCompletionRequest): RequestFunctionTool[] {
  return (chat.tools ?? []).map(({ function: f }) => ({
    type: 'function',
    name: f.name,
    description: f.description,
    parameters: f.parameters,
    strict: f.strict,
  }));
}

function toolChoice(choice: ChatCompletionRequest['tool_choice']): ToolChoice | undefined {
  if (choice == null) return undefined;
  return typeof choice === 'string' ? choice : { type: 'function', name: choice.function.name };
}

function textFormat(format: ChatCompletionRequest['response_format']): TextFormat | undefined {
  if (format == null || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const { name, schema, description, strict } = format.json_schema;
  return { type: 'json_schema', name, schema, ...(description !== undefined ? { description } : {}), ...(strict != null ? { strict } : {}) };
}

/** A new response over the whole conversation; system and developer messages join the instructions. */
function newRun(chat: ChatCompletionRequest): CreateResponseRequest {
  const instructions = chat.messages.filter((m) => m.role === 'system' || m.role === 'developer').map(chatText);
  const input = conversationItems(chat.messages);
  if (input.length === 0) refuse('/messages', 'holds no user or assistant message to answer');
  const format = textFormat(chat.response_format);
  const maxTokens = chat.max_completion_tokens ?? chat.max_tokens;
  const choice = toolChoice(chat.tool_choice);
  return {
    model: chat.model,
    input,
    ...(instructions.length > 0 ? { instructions: instructions.join('\n\n') } : {}),
    ...(chat.metadata ? { metadata: chat.metadata } : {}),
    ...(chat.tools && chat.tools.length > 0 ? { tools: tools(chat) } : {}),
    ...(choice !== undefined ? { tool_choice: choice } : {}),
    ...(chat.parallel_tool_calls != null ? { parallel_tool_calls: chat.parallel_tool_calls } : {}),
    ...(format ? { text: { format } } : {}),
    ...(chat.temperature != null ? { temperature: chat.temperature } : {}),
    ...(chat.top_p != null ? { top_p: chat.top_p } : {}),
    ...(maxTokens != null ? { max_output_tokens: maxTokens } : {}),
    ...(chat.user != null ? { user: chat.user } : {}),
  };
}

/** The trailing tool messages, with their indexes. */
function trailingToolResults(messages: ChatMessage[]): InputFunctionCallOutput[] {
  let start = messages.length;
  while (start > 0 && messages[start - 1].role === 'tool') start--;
  return messages.slice(start).map((message, offset) => toolResult(message, start + offset));
}

export async function chatPlan(api: KernelApi, projectId: string, chat: ChatCompletionRequest): Promise<ChatPlan> {
  if ((chat.n ?? 1) !== 1) refuse('/n', 'must be 1: an agent run has one answer');
  const results = trailingToolResults(chat.messages);
  if (results.length > 0) {
    // The response of this agent that waits for these calls (a cancelled one waits for nothing).
    const waiting = await api.responses.answering(projectId, { agent: chat.model, input: results });
    if (waiting && waiting.status === 'waiting_for_tool') {
      // As OpenAI asks: every tool call of the assistant's turn is answered.
      const answered = new Set(results.map((r) => r.call_id));
      const missing = waiting.pending_calls.filter((call) => call.waiting_for === 'tool_output' && !answered.has(call.call_id)).map((call) => call.call_id);
      if (missing.length > 0) refuse('/messages', `must answer every tool call of the assistant's turn; missing ${missing.join(', ')}`);
      return { request: { model: chat.model, previous_response_id: waiting.id, input: results }, answering: waiting };
    }
  }
  return { request: newRun(chat), answering: null };
}
