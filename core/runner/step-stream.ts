// Streams one model step into the journal as OpenAI-shaped output events: a
// message item opened on the first text delta, one delta event per delta, and
// the item closed when the step ends (as `incomplete` when it was cut off).
import type { FunctionCallItem, Item, MessageItem } from '../../generated/schemas.js';
import { newId } from '../ids.js';
import { appendEvent, type JournalWriter } from '../journal/journal.js';
import type { Db } from '../store/db.js';

interface OpenMessage {
  id: string;
  outputIndex: number;
  text: string;
}

export class StepStream {
  /** Items this step finished, in output order. */
  readonly items: Item[] = [];
  private message: OpenMessage | null = null;
  private nextIndex: number;

  constructor(
    private readonly db: Db,
    private readonly writer: JournalWriter,
    firstOutputIndex: number,
  ) {
    this.nextIndex = firstOutputIndex;
  }

  private append(type: string, payload: Record<string, unknown>): Promise<number> {
    return appendEvent(this.db, this.writer, type, payload);
  }

  async textDelta(delta: string): Promise<void> {
    const message = this.message ?? (await this.openMessage());
    message.text += delta;
    await this.append('response.output_text.delta', { item_id: message.id, output_index: message.outputIndex, content_index: 0, delta, logprobs: [] });
  }

  async toolCall(callId: string, name: string, args: string): Promise<void> {
    await this.closeMessage('completed');
    const item: FunctionCallItem = { id: newId('fc'), type: 'function_call', call_id: callId, name, arguments: args, status: 'completed' };
    const outputIndex = this.nextIndex++;
    await this.append('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress' } });
    await this.append('response.output_item.done', { output_index: outputIndex, item });
    this.items.push(item);
  }

  /** The step ended normally. */
  finish(): Promise<void> {
    return this.closeMessage('completed');
  }

  /** The step was cut off: an open message is closed as incomplete; a retry streams into a new item. */
  async abandon(): Promise<void> {
    await this.closeMessage('incomplete');
  }

  private async openMessage(): Promise<OpenMessage> {
    const message: OpenMessage = { id: newId('msg'), outputIndex: this.nextIndex++, text: '' };
    this.message = message;
    const item: MessageItem = { id: message.id, type: 'message', role: 'assistant', status: 'in_progress', content: [] };
    await this.append('response.output_item.added', { output_index: message.outputIndex, item });
    await this.append('response.content_part.added', {
      item_id: message.id,
      output_index: message.outputIndex,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    return message;
  }

  private async closeMessage(status: 'completed' | 'incomplete'): Promise<void> {
    const message = this.message;
    if (!message) return;
    this.message = null;
    const part = { type: 'output_text' as const, text: message.text, annotations: [] };
    const where = { item_id: message.id, output_index: message.outputIndex, content_index: 0 };
    const item: MessageItem = { id: message.id, type: 'message', role: 'assistant', status, content: [part] };
    if (status === 'completed') {
      await this.append('response.output_text.done', { ...where, text: message.text, logprobs: [] });
      await this.append('response.content_part.done', { ...where, part });
    }
    await this.append('response.output_item.done', { output_index: message.outputIndex, item });
    this.items.push(item);
  }
}
