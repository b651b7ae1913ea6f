// Chat Completions streams a tool call as fragments keyed by `index`: the first
// brings id and name, later ones append to the arguments. Some compatible servers
// send whole calls instead, all at index 0 with distinct ids, or no id at all;
// a fragment with a new id at a busy index therefore starts a new call.
import { randomUUID } from 'node:crypto';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { toolArguments } from '../shared/openai-client.js';

type Fragment = ChatCompletionChunk.Choice.Delta.ToolCall;

export interface AssembledCall {
  callId: string;
  name: string;
  arguments: string;
}

export class ToolCallAssembler {
  private readonly calls: { id?: string; name: string; arguments: string }[] = [];
  private readonly slotOfIndex = new Map<number, number>();

  add(fragment: Fragment): void {
    const index = fragment.index ?? this.calls.length;
    let slot = this.slotOfIndex.get(index);
    const current = slot === undefined ? undefined : this.calls[slot];
    if (current === undefined || (fragment.id && current.id && fragment.id !== current.id)) {
      slot = this.calls.push({ name: '', arguments: '' }) - 1;
      this.slotOfIndex.set(index, slot);
    }
    const call = this.calls[slot!];
    if (fragment.id && !call.id) call.id = fragment.id;
    // The name comes whole in one fragment; servers that repeat it must not double it.
    if (fragment.function?.name && !call.name) call.name = fragment.function.name;
    if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
  }

  /** The complete calls in stream order; a server that sent no id gets one made up. */
  finish(): AssembledCall[] {
    return this.calls
      .filter((call) => call.name !== '')
      .map((call) => ({ callId: call.id ?? `call_${randomUUID().replaceAll('-', '')}`, name: call.name, arguments: toolArguments(call.arguments) }));
  }
}
