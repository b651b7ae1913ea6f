// Chat Completions, streamed through the official SDK, for OpenAI-compatible
// servers (vLLM, llama.cpp, Ollama, LiteLLM) chosen by the connection's base URL.
// Palai's Responses-shaped items become chat messages: instructions and
// system/developer messages as `system`, function calls folded into the assistant
// message that made them, their outputs as `tool` messages. Tool calls arrive in
// fragments and are emitted whole when the stream finishes; usage comes from the
// last chunk when the server honours `stream_options.include_usage` (else zero).
// A stream that ends without a finish_reason broke; the kernel retries it.
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { Item } from '../../../generated/schemas.js';
import { ModelProviderError, type ModelAdapter, type ModelEvent, type ModelRequest } from '../../../core/models/model-port.js';
import { DEFAULT_TIMEOUT_MS, guardedStream, outputFormatName } from '../shared/openai-client.js';
import { ToolCallAssembler } from './tool-call-assembler.js';

export interface OpenAIChatOptions {
  /** How long the server may stay silent (before the headers or between chunks), in ms. Default: 120 000. */
  timeoutMs?: number;
}

export function chatMessages(instructions: string | null, items: Item[]): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = instructions ? [{ role: 'system', content: instructions }] : [];
  for (const item of items) {
    switch (item.type) {
      case 'message': {
        // Plain strings: many local servers' chat templates take no content arrays.
        const content = item.content.map((part) => part.text).join('');
        if (item.role === 'assistant' || item.role === 'user') messages.push({ role: item.role, content });
        else messages.push({ role: 'system', content });
        break;
      }
      case 'function_call': {
        const call = { id: item.call_id, type: 'function' as const, function: { name: item.name, arguments: item.arguments } };
        const last = messages.at(-1);
        if (last?.role === 'assistant') (last as ChatCompletionAssistantMessageParam).tool_calls = [...(last.tool_calls ?? []), call];
        else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        break;
      }
      case 'function_call_output':
        messages.push({ role: 'tool', tool_call_id: item.call_id, content: item.output });
        break;
      default: {
        const unknown: never = item;
        throw new Error(`unknown item ${JSON.stringify(unknown)}`);
      }
    }
  }
  return messages;
}

export function chatRequest(request: ModelRequest): ChatCompletionCreateParamsStreaming {
  const tools: ChatCompletionTool[] = request.tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.parameters },
  }));
  return {
    model: request.modelName ?? '',
    stream: true,
    stream_options: { include_usage: true },
    messages: chatMessages(request.instructions, request.items),
    // Tool options only travel with tools: servers reject them alone, and some reject an empty list.
    ...(tools.length > 0 ? { tools } : {}),
    ...(tools.length > 0 && request.toolChoice
      ? {
          tool_choice: typeof request.toolChoice === 'string' ? request.toolChoice : { type: 'function' as const, function: { name: request.toolChoice.name } },
        }
      : {}),
    ...(tools.length > 0 && request.parallelToolCalls !== undefined ? { parallel_tool_calls: request.parallelToolCalls } : {}),
    ...(request.outputSchema
      ? { response_format: { type: 'json_schema', json_schema: { name: outputFormatName(request.outputSchema), schema: request.outputSchema, strict: false } } }
      : {}),
    // `max_tokens`, not OpenAI's newer `max_completion_tokens`: it is the one compatible servers all read.
    ...(request.maxOutputTokens !== undefined ? { max_tokens: request.maxOutputTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
  };
}

export class OpenAIChatModel implements ModelAdapter {
  readonly provider = 'openai-chat';
  private readonly timeoutMs: number;

  constructor(options: OpenAIChatOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const chunks = guardedStream<ChatCompletionChunk>(
      { provider: this.provider, credentials: request.credentials, transport: request.transport, timeoutMs: this.timeoutMs, signal: request.signal },
      { path: '/chat/completions', body: chatRequest(request) },
    );
    const calls = new ToolCallAssembler();
    let finishReason: string | null = null;
    let usage: ChatCompletionChunk['usage'] = null;

    for await (const chunk of chunks) {
      if (chunk.usage) usage = chunk.usage;
      // Only one choice is asked for; the usage chunk has none.
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta ?? {};
      if (delta.content) yield { type: 'text_delta', text: delta.content };
      if (delta.refusal) yield { type: 'text_delta', text: delta.refusal };
      for (const fragment of delta.tool_calls ?? []) calls.add(fragment);
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    if (finishReason === null) throw new ModelProviderError(this.provider, 'the stream ended without a finish_reason');

    // Cut off by the token limit, a call's arguments are unfinished JSON: none is emitted.
    const complete = finishReason === 'length' ? [] : calls.finish();
    for (const call of complete) yield { type: 'tool_call', ...call };
    yield {
      type: 'usage',
      inputTokens: usage?.prompt_tokens ?? 0,
      outputTokens: usage?.completion_tokens ?? 0,
      cachedTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
    };
    // Some servers finish a tool-calling turn with 'stop'; the calls decide.
    yield { type: 'finish', reason: finishReason === 'length' ? 'length' : complete.length > 0 ? 'tool_calls' : 'stop' };
  }
}
