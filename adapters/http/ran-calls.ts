// The tool calls Palai runs itself, as OpenAI shows the tools it runs: one `mcp_call` item (server_label
// `palai`) holding the call and, once it has one, its output, instead of a `function_call` and a
// `function_call_output`. A client reads a `function_call` as a call for it to run (the Agents SDK fails
// on a tool it does not have), and OpenAI never answers with a `function_call_output` (the AI SDK refuses
// one). The caller's own function calls stay `function_call` items.
import type { FunctionCallItem, Item, McpCallItem, ResponseOutputItem } from '../../generated/schemas.js';
import type { JournalEntry } from '../../core/api/index.js';

type RanCall = FunctionCallItem & { server: true };

const isRanCall = (item: Item): item is RanCall => item.type === 'function_call' && item.server === true;

export function mcpCall(call: FunctionCallItem, output: string | null): McpCallItem {
  const { id, name, arguments: args, call_id } = call;
  const status = output === null ? 'in_progress' : 'completed';
  return { id, type: 'mcp_call', server_label: 'palai', name, arguments: args, output, error: null, status, approval_request_id: call_id };
}

/** Output items as the REST API shows them: each call Palai ran merged with its output. */
export function restOutput(items: Item[]): ResponseOutputItem[] {
  const ran = new Set(items.filter(isRanCall).map((call) => call.call_id));
  const outputs = new Map(items.flatMap((item) => (item.type === 'function_call_output' && ran.has(item.call_id) ? [[item.call_id, item.output]] : [])));
  return items.flatMap((item): ResponseOutputItem[] => {
    if (isRanCall(item)) return [mcpCall(item, outputs.get(item.call_id) ?? null)];
    if (item.type === 'function_call_output' && ran.has(item.call_id)) return [];
    return [item];
  });
}

/** One item event of a stream, as the REST API shows it. */
export type ShownItemEvent =
  { kind: 'added' | 'done'; outputIndex: number; item: ResponseOutputItem } | { kind: 'completed'; outputIndex: number; itemId: string };

/**
 * The item events of one stream as the REST API shows them: a ran call's as its `mcp_call`'s; its output's
 * `added` as OpenAI's `response.mcp_call.completed` and its `done` as a second `done` of that `mcp_call`
 * with the output, both at the call's output index. When this stream did not show the call (it began later:
 * a resumed or answered stream), the output's events announce the `mcp_call` instead, added and done, at
 * the output's own index, one no earlier event of the stream used. Each journal entry is shown by one
 * event, so the stream's sequence numbers keep no gaps. `undefined`: the event is shown as it is.
 */
export class RanCallStream {
  private readonly shown = new Map<string, { index: number; call: FunctionCallItem }>();
  private readonly ran = new Map<string, FunctionCallItem>();

  /** Calls Palai ran that this stream's response holds (from a snapshot), so their outputs can be shown with them. */
  know(items: Item[]): void {
    for (const item of items) if (isRanCall(item)) this.ran.set(item.call_id, item);
  }

  project(entry: JournalEntry): ShownItemEvent[] | undefined {
    const { event } = entry;
    if (event.type !== 'item.added' && event.type !== 'item.done' && event.type !== 'item.updated') return undefined;
    const { item } = event;
    const kind = event.type === 'item.added' ? 'added' : 'done';
    if (isRanCall(item)) {
      this.shown.set(item.call_id, { index: event.output_index, call: item });
      this.ran.set(item.call_id, item);
      return [{ kind, outputIndex: event.output_index, item: mcpCall(item, null) }];
    }
    if (item.type !== 'function_call_output') return undefined;
    const shown = this.shown.get(item.call_id);
    if (shown) {
      if (kind === 'added') return [{ kind: 'completed', outputIndex: shown.index, itemId: shown.call.id }];
      return [{ kind: 'done', outputIndex: shown.index, item: mcpCall(shown.call, item.output) }];
    }
    const call = this.ran.get(item.call_id);
    if (!call) return undefined;
    // Not shown yet: announced now, at this output's index.
    this.shown.set(item.call_id, { index: event.output_index, call });
    return [{ kind, outputIndex: event.output_index, item: kind === 'added' ? mcpCall(call, null) : mcpCall(call, item.output) }];
  }
}
