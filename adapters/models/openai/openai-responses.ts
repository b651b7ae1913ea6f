// OpenAI's Responses API through the official SDK, streamed. Palai's items are
// already in Responses shape, so the request is nearly a copy: instructions,
// items as `input`, function tools, and an output schema as `text.format`.
// Item ids are left out: they are Palai's, and OpenAI checks ids against its own.
// Nothing is stored at OpenAI (`store: false`); the journal is the record.
// Out come text deltas as they stream, each function call once its item is done,
// then usage and the finish reason from the terminal event. A stream that ends
// without one broke, and the kernel retries it as a fresh step.
import type {
  FunctionTool,
  Response,
  ResponseCreateParamsStreaming,
  ResponseFunctionToolCall,
  ResponseInputItem,
  ResponseStreamEvent,
} from 'openai/resources/responses/responses';
import type { Item } from '../../../generated/schemas.js';
import { ModelProviderError, type ModelAdapter, type ModelEvent, type ModelRequest } from '../../../core/models/model-port.js';
import { DEFAULT_TIMEOUT_MS, guardedStream, outputFormatName, toolArguments } from '../shared/openai-client.js';
import { cleanCause } from '../shared/openai-errors.js';

export interface OpenAIResponsesOptions {
  /** How long OpenAI may stay silent (before the headers or between events), in ms. Default: 120 000. */
  timeoutMs?: number;
}

function inputItem(item: Item): ResponseInputItem {
  switch (item.type) {
    case 'message':
      if (item.role === 'assistant') {
        const content = item.content.map((part) => ({ type: 'output_text' as const, text: part.text, annotations: [] }));
        // The SDK types an assistant message as OpenAI's own output (with id and status); the API takes it without.
        return { type: 'message', role: 'assistant', content } as unknown as ResponseInputItem;
      }
      return { type: 'message', role: item.role, content: item.content.map((part) => ({ type: 'input_text', text: part.text })) };
    case 'function_call':
      return { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments };
    case 'function_call_output':
      return { type: 'function_call_output', call_id: item.call_id, output: item.output };
    default: {
      const unknown: never = item;
      throw new Error(`unknown item ${JSON.stringify(unknown)}`);
    }
  }
}

export function responsesRequest(request: ModelRequest): ResponseCreateParamsStreaming {
  const tools: FunctionTool[] = request.tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    parameters: tool.parameters,
    // Palai's tool schemas need not meet strict mode's rules (every property required, no extras).
    strict: false,
  }));
  return {
    model: request.modelName ?? '',
    stream: true,
    store: false,
    input: request.items.map(inputItem),
    ...(request.instructions ? { instructions: request.instructions } : {}),
    // Tool options only travel with tools: providers reject them alone.
    ...(tools.length > 0 ? { tools } : {}),
    ...(tools.length > 0 && request.toolChoice
      ? { tool_choice: typeof request.toolChoice === 'string' ? request.toolChoice : { type: 'function' as const, name: request.toolChoice.name } }
      : {}),
    ...(tools.length > 0 && request.parallelToolCalls !== undefined ? { parallel_tool_calls: request.parallelToolCalls } : {}),
    ...(request.outputSchema
      ? { text: { format: { type: 'json_schema', name: outputFormatName(request.outputSchema), schema: request.outputSchema, strict: false } } }
      : {}),
    ...(request.maxOutputTokens !== undefined ? { max_output_tokens: request.maxOutputTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
  };
}

/** What a failed response's error code says about retrying, as the HTTP status it stands for. */
const FAILED_CODE_STATUS: Record<string, number> = { invalid_prompt: 400, rate_limit_exceeded: 429, server_error: 500 };

export class OpenAIResponsesModel implements ModelAdapter {
  readonly provider = 'openai';
  private readonly timeoutMs: number;

  constructor(options: OpenAIResponsesOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const clean = (text: string) => cleanCause(text, request.credentials.apiKey);
    const events = guardedStream<ResponseStreamEvent>(
      { provider: this.provider, credentials: request.credentials, transport: request.transport, timeoutMs: this.timeoutMs, signal: request.signal },
      { path: '/responses', body: responsesRequest(request) },
    );
    const emitted = new Set<string>();
    const toolCall = (item: ResponseFunctionToolCall): ModelEvent | null => {
      if (emitted.has(item.call_id) || item.status === 'incomplete') return null;
      emitted.add(item.call_id);
      return { type: 'tool_call', callId: item.call_id, name: item.name, arguments: toolArguments(item.arguments) };
    };
    let streamedText = false;
    let final: Response | null = null;

    for await (const event of events) {
      switch (event.type) {
        case 'response.output_text.delta':
        case 'response.refusal.delta':
          if (event.delta) {
            streamedText = true;
            yield { type: 'text_delta', text: event.delta };
          }
          break;
        case 'response.output_item.done':
          if (event.item.type === 'function_call') {
            const call = toolCall(event.item);
            if (call) yield call;
          }
          break;
        case 'response.completed':
        case 'response.incomplete':
          final = event.response;
          break;
        case 'response.failed': {
          const error = event.response.error;
          const status = error ? FAILED_CODE_STATUS[error.code] : undefined;
          throw new ModelProviderError(this.provider, clean(`response failed: ${error ? `${error.code}: ${error.message}` : 'no reason given'}`), status);
        }
        case 'error':
          throw new ModelProviderError(this.provider, clean(`stream error: ${event.code ? `${event.code}: ` : ''}${event.message}`));
        default:
          break;
      }
    }
    if (final === null) throw new ModelProviderError(this.provider, 'the stream ended before response.completed');

    // Servers that skip the incremental events still list the output on the terminal response.
    for (const item of final.output ?? []) {
      if (item.type === 'function_call') {
        const call = toolCall(item);
        if (call) yield call;
      } else if (item.type === 'message' && !streamedText) {
        for (const part of item.content) {
          const text = part.type === 'output_text' ? part.text : part.refusal;
          if (text) yield { type: 'text_delta', text };
        }
      }
    }
    const usage = final.usage;
    yield {
      type: 'usage',
      inputTokens: usage?.input_tokens ?? 0,
      outputTokens: usage?.output_tokens ?? 0,
      cachedTokens: usage?.input_tokens_details?.cached_tokens ?? 0,
    };
    const truncated = final.status === 'incomplete' && final.incomplete_details?.reason === 'max_output_tokens';
    yield { type: 'finish', reason: truncated ? 'length' : emitted.size > 0 ? 'tool_calls' : 'stop' };
  }
}
