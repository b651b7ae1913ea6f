// A canonical model request as Messages API parameters. Anthropic keeps the system
// prompt out of the turns, wants user and assistant turns to alternate, carries tool
// calls as `tool_use` blocks of the assistant and their outputs as `tool_result`
// blocks of the next user turn, and requires `max_tokens`.
import type { ContentBlockParam, MessageCreateParamsStreaming, MessageParam, OutputConfig, Tool, ToolChoice } from '@anthropic-ai/sdk/resources/messages';
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import type { Item } from '../../../generated/schemas.js';
import type { ModelRequest, ToolDefinition } from '../../../core/models/model-port.js';

interface Turn {
  role: 'user' | 'assistant';
  content: ContentBlockParam[];
}

/**
 * The conversation as alternating turns plus the text the system prompt gets from
 * system and developer messages (Anthropic has no such roles inside `messages`).
 */
function toTurns(items: Item[]): { system: string[]; messages: MessageParam[] } {
  const system: string[] = [];
  const turns: Turn[] = [];
  const append = (role: Turn['role'], block: ContentBlockParam) => {
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(block);
    else turns.push({ role, content: [block] });
  };

  for (const item of items) {
    switch (item.type) {
      case 'message': {
        const texts = item.content.map((part) => part.text).filter((text) => text.trim() !== '');
        if (item.role === 'system' || item.role === 'developer') {
          if (texts.length > 0) system.push(texts.join(''));
          break;
        }
        for (const text of texts) append(item.role, { type: 'text', text });
        break;
      }
      case 'function_call':
        append('assistant', { type: 'tool_use', id: item.call_id, name: item.name, input: toolInput(item.arguments) });
        break;
      case 'function_call_output':
        append('user', { type: 'tool_result', tool_use_id: item.call_id, ...(item.output !== '' ? { content: item.output } : {}) });
        break;
      default: {
        const unknown: never = item;
        throw new Error(`unknown conversation item ${JSON.stringify(unknown)}`);
      }
    }
  }
  // A user turn must open with the results of the previous turn's tool calls.
  for (const turn of turns) {
    if (turn.role === 'user') turn.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
  }
  return { system, messages: turns };
}

/** A tool call's input must be an object; arguments that are not a JSON object become `{}`. */
function toolInput(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function toTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    input_schema: { type: 'object', ...tool.parameters } as Tool.InputSchema,
  };
}

function toToolChoice(request: ModelRequest): ToolChoice | undefined {
  const disableParallel = request.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  switch (request.toolChoice) {
    case 'none':
      return { type: 'none' };
    case 'required':
      return { type: 'any', ...disableParallel };
    case 'auto':
      return { type: 'auto', ...disableParallel };
    case undefined:
      return request.parallelToolCalls === false ? { type: 'auto', ...disableParallel } : undefined;
    default:
      return { type: 'tool', name: request.toolChoice.name, ...disableParallel };
  }
}

/**
 * Anthropic's JSON outputs accept a subset of JSON Schema; the SDK's transform moves
 * what they do not support into descriptions (the kernel still checks the full schema).
 * A schema it cannot express (no type at its root, say) is left to that check alone.
 */
function toOutputConfig(schema: Record<string, unknown>): OutputConfig | undefined {
  try {
    return { format: { type: 'json_schema', schema: transformJSONSchema(schema) } };
  } catch {
    return undefined;
  }
}

export interface MappingDefaults {
  /** `max_tokens` when the request sets no maxOutputTokens. */
  maxTokens: number;
}

/**
 * The Messages API parameters of a request. `temperature` and `top_p` are not sent:
 * API version 2026-10-21, the one the SDK speaks, rejects sampling parameters.
 */
export function toMessagesParams(request: ModelRequest, model: string, defaults: MappingDefaults): MessageCreateParamsStreaming {
  const { system, messages } = toTurns(request.items);
  const systemText = [request.instructions ?? '', ...system].filter((text) => text.trim() !== '').join('\n\n');
  const toolChoice = request.tools.length > 0 ? toToolChoice(request) : undefined;
  const outputConfig = request.outputSchema ? toOutputConfig(request.outputSchema) : undefined;
  return {
    model,
    max_tokens: request.maxOutputTokens ?? defaults.maxTokens,
    messages,
    ...(systemText ? { system: systemText } : {}),
    ...(request.tools.length > 0 ? { tools: request.tools.map(toTool) } : {}),
    ...(toolChoice ? { tool_choice: toolChoice } : {}),
    ...(outputConfig ? { output_config: outputConfig } : {}),
    stream: true,
  };
}
