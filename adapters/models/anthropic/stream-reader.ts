// Anthropic stream events → canonical model events. Text deltas pass through as they
// come; a tool_use block's input arrives as JSON fragments and becomes one tool_call
// when the block stops; usage (message_start, then message_delta's cumulative totals)
// and the finish reason are emitted once, at message_stop. Thinking blocks, pings and
// event types this code does not know are skipped.
import type { RawMessageStreamEvent, StopReason } from '@anthropic-ai/sdk/resources/messages';
import type { ModelEvent } from '../../../core/models/model-port.js';

type Usage = Extract<ModelEvent, { type: 'usage' }>;
type FinishReason = Extract<ModelEvent, { type: 'finish' }>['reason'];

interface ToolBlock {
  id: string;
  name: string;
  json: string;
  startInput: unknown;
}

const FINISH_REASONS: Record<StopReason, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // Server tools paused a long turn; for Palai the answer so far is the answer.
  pause_turn: 'stop',
  // The model declined; its text (if any) is the answer and an output schema check will catch the rest.
  refusal: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
};

/** Anthropic counts cache reads and writes apart from `input_tokens`; canonical input tokens include them. */
interface TokenCounts {
  input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens?: number | null;
}

export class MessageStreamReader {
  private readonly tools = new Map<number, ToolBlock>();
  private readonly counts = { input: 0, cacheWrite: 0, cacheRead: 0, output: 0 };
  private stopReason: StopReason | null = null;
  private toolCalls = 0;
  private usageSent = false;
  /** message_start arrived: the provider counted the prompt. */
  started = false;
  /** message_stop arrived: the answer is complete. */
  stopped = false;

  read(event: RawMessageStreamEvent): ModelEvent[] {
    switch (event.type) {
      case 'message_start':
        this.started = true;
        this.count(event.message.usage);
        return [];
      case 'content_block_start':
        if (event.content_block.type === 'tool_use') {
          const { id, name, input } = event.content_block;
          this.tools.set(event.index, { id, name, json: '', startInput: input });
        }
        return [];
      case 'content_block_delta': {
        const { delta } = event;
        if (delta.type === 'text_delta') return delta.text === '' ? [] : [{ type: 'text_delta', text: delta.text }];
        if (delta.type === 'input_json_delta') {
          const tool = this.tools.get(event.index);
          if (tool) tool.json += delta.partial_json;
        }
        return [];
      }
      case 'content_block_stop': {
        const tool = this.tools.get(event.index);
        if (!tool) return [];
        this.tools.delete(event.index);
        this.toolCalls++;
        return [{ type: 'tool_call', callId: tool.id, name: tool.name, arguments: toolArguments(tool) }];
      }
      case 'message_delta':
        this.stopReason = event.delta.stop_reason ?? this.stopReason;
        this.count(event.usage);
        return [];
      case 'message_stop': {
        if (this.stopped) return [];
        this.stopped = true;
        return [...this.usage(), { type: 'finish', reason: this.finishReason() }];
      }
      default: {
        // Typed as impossible, yet newer API versions may add event types: skip them.
        const later: never = event;
        void later;
        return [];
      }
    }
  }

  /** The usage known so far, once: at message_stop, or when a started stream fails. */
  usage(): Usage[] {
    if (!this.started || this.usageSent) return [];
    this.usageSent = true;
    const { input, cacheWrite, cacheRead, output } = this.counts;
    return [{ type: 'usage', inputTokens: input + cacheWrite + cacheRead, outputTokens: output, cachedTokens: cacheRead }];
  }

  /** message_delta repeats the totals (cumulative, not increments); a missing or null field keeps the earlier value. */
  private count(usage: TokenCounts | null | undefined): void {
    if (!usage) return;
    this.counts.input = usage.input_tokens ?? this.counts.input;
    this.counts.cacheWrite = usage.cache_creation_input_tokens ?? this.counts.cacheWrite;
    this.counts.cacheRead = usage.cache_read_input_tokens ?? this.counts.cacheRead;
    this.counts.output = usage.output_tokens ?? this.counts.output;
  }

  private finishReason(): FinishReason {
    if (this.stopReason && this.stopReason in FINISH_REASONS) return FINISH_REASONS[this.stopReason];
    return this.toolCalls > 0 ? 'tool_calls' : 'stop';
  }
}

/** The input's JSON text as streamed; a tool without parameters streams none, which means `{}`. */
function toolArguments(tool: ToolBlock): string {
  if (tool.json.trim() !== '') return tool.json;
  const start = tool.startInput;
  return start && typeof start === 'object' && Object.keys(start).length > 0 ? JSON.stringify(start) : '{}';
}
