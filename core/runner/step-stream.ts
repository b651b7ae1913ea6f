// Streams one model step into the journal: a message item is opened (and its
// deltas journaled) live; everything that finishes the step — the item's done
// events, the function_call items — is held back and journaled in the same
// transaction that commits the step. A step cut off by a crash therefore leaves
// an open item, which the next worker closes as `incomplete`.
//
// With `coalesce`, deltas that arrive while the previous one is still being
// written are joined into one delta event: a fast provider costs a commit per
// write-round-trip instead of one per token, and the first delta still leaves at once.
import type { FunctionCallItem, Item, MessageItem } from '../../generated/schemas.js';
import { newId } from '../ids.js';
import { appendEvent, type JournalWriter, type KernelEvent } from '../journal/journal.js';
import type { Db, Queryable } from '../store/db.js';

/** An event held back until the step commits. */
export type HeldEvent = KernelEvent;

export interface ProposedCall {
  callId: string;
  itemId: string;
  name: string;
  arguments: string;
}

interface OpenMessage {
  id: string;
  outputIndex: number;
  text: string;
  /** Whether its output_item.added and content_part.added are journaled yet. */
  announced: boolean;
}

const MAX_PENDING_CHARS = 64 * 1024;

export class StepStream {
  /** Items of this step, in output order. */
  readonly items: Item[] = [];
  /** Events to journal when the step commits. */
  readonly held: HeldEvent[] = [];
  readonly calls: ProposedCall[] = [];
  private message: OpenMessage | null = null;
  private nextIndex: number;
  private pending = '';
  private draining: Promise<void> | null = null;
  private drainError: unknown = null;

  constructor(
    private readonly db: Db,
    private readonly writer: JournalWriter,
    firstOutputIndex: number,
    private readonly coalesce = false,
  ) {
    this.nextIndex = firstOutputIndex;
  }

  get text(): string {
    return this.items.map((item) => (item.type === 'message' ? item.content.map((p) => p.text).join('') : '')).join('');
  }

  async textDelta(delta: string): Promise<void> {
    if (this.drainError) throw this.drainError;
    const message = this.message ?? this.openMessage();
    message.text += delta;
    if (!this.coalesce) return this.writeDelta(message, delta);
    this.pending += delta;
    this.draining ??= this.drain(message);
    // Backpressure: a provider far faster than the store waits for the write.
    if (this.pending.length > MAX_PENDING_CHARS) await this.settle();
  }

  /** The first delta of a message is journaled together with the events that open it: one commit, not three. */
  private async writeDelta(message: OpenMessage, delta: string): Promise<void> {
    const deltaEvent: KernelEvent = { type: 'text.delta', item_id: message.id, output_index: message.outputIndex, content_index: 0, delta };
    if (message.announced) {
      await appendEvent(this.db, this.writer, deltaEvent);
      return;
    }
    await this.db.transaction(async (tx) => {
      const item: MessageItem = { id: message.id, type: 'message', role: 'assistant', status: 'in_progress', content: [] };
      await appendEvent(tx, this.writer, { type: 'item.added', output_index: message.outputIndex, item });
      await appendEvent(tx, this.writer, {
        type: 'content.added',
        item_id: message.id,
        output_index: message.outputIndex,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
      await appendEvent(tx, this.writer, deltaEvent);
    });
    message.announced = true;
  }

  private async drain(message: OpenMessage): Promise<void> {
    try {
      while (this.pending) {
        const delta = this.pending;
        this.pending = '';
        await this.writeDelta(message, delta);
      }
    } catch (error) {
      this.drainError = error;
    } finally {
      this.draining = null;
    }
  }

  /** Waits until every delta received so far is journaled. */
  async settle(): Promise<void> {
    while (this.draining) await this.draining;
    if (this.drainError) throw this.drainError;
  }

  async toolCall(callId: string, name: string, args: string): Promise<void> {
    await this.closeMessage('completed');
    const item: FunctionCallItem = { id: newId('fc'), type: 'function_call', call_id: callId, name, arguments: args, status: 'completed' };
    const outputIndex = this.nextIndex++;
    this.held.push({ type: 'item.added', output_index: outputIndex, item: { ...item, status: 'in_progress' } });
    this.held.push({ type: 'item.done', output_index: outputIndex, item });
    this.items.push(item);
    this.calls.push({ callId, itemId: item.id, name, arguments: args });
  }

  /** The step ended normally. */
  finish(): Promise<void> {
    return this.closeMessage('completed');
  }

  /**
   * The step was cut off (cancel, deadline, provider error): an open message is
   * closed as incomplete, and proposed calls are dropped — they were never committed.
   */
  async interrupt(): Promise<void> {
    await this.closeMessage('incomplete').catch(() => undefined);
    const callItems = new Set(this.calls.map((c) => c.itemId));
    const keep = (e: HeldEvent) => !('item' in e && callItems.has(e.item.id ?? ''));
    this.held.splice(0, this.held.length, ...this.held.filter(keep));
    this.items.splice(0, this.items.length, ...this.items.filter((item) => !callItems.has(item.id)));
    this.calls.length = 0;
  }

  /** Journals the held events; call inside the committing transaction. */
  async flush(tx: Queryable): Promise<void> {
    for (const event of this.held) await appendEvent(tx, this.writer, event);
    this.held.length = 0;
  }

  private openMessage(): OpenMessage {
    const message: OpenMessage = { id: newId('msg'), outputIndex: this.nextIndex++, text: '', announced: false };
    this.message = message;
    return message;
  }

  private async closeMessage(status: 'completed' | 'incomplete'): Promise<void> {
    const message = this.message;
    if (!message) return;
    await this.settle();
    this.message = null;
    const part = { type: 'output_text' as const, text: message.text, annotations: [] };
    const where = { item_id: message.id, output_index: message.outputIndex, content_index: 0 };
    const item: MessageItem = { id: message.id, type: 'message', role: 'assistant', status, content: [part] };
    if (status === 'completed') {
      this.held.push({ type: 'text.done', ...where, text: message.text });
      this.held.push({ type: 'content.done', ...where, part });
    }
    this.held.push({ type: 'item.done', output_index: message.outputIndex, item });
    this.items.push(item);
  }
}
