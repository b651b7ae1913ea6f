// Streams one model step into the journal: a message item is opened (and its
// deltas journaled) live; everything that finishes the step — the item's done
// events, the function_call items — is held back and journaled in the same
// transaction that commits the step. A step cut off by a crash therefore leaves
// an open item, which the next worker closes as `incomplete`.
//
// Deltas are written when the provider pauses: a write starts on the next turn
// of the event loop and takes every delta received so far, as one statement.
// A provider streaming over the network pauses between chunks, so its first
// delta leaves at once; a step that arrives whole (the fake model, a buffered
// reply) has its deltas committed with the step, at no cost of their own. With
// `coalesce`, deltas that arrive while a write is in flight are joined into one
// delta event: a fast provider costs a statement per write round trip, not per token.
import type { FunctionCallItem, Item, MessageItem } from '../../generated/schemas.js';
import { outputItemId } from '../ids.js';
import { appendEvents, type JournalWriter, type KernelEvent } from '../journal/journal.js';
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

/** Unwritten delta text above which the provider waits for a write. */
const MAX_PENDING_CHARS = 64 * 1024;

export class StepStream {
  /** Items of this step, in output order. */
  readonly items: Item[] = [];
  /** Events to journal when the step commits. */
  readonly held: HeldEvent[] = [];
  readonly calls: ProposedCall[] = [];
  private message: OpenMessage | null = null;
  private nextIndex: number;
  /** Deltas of the open message not yet journaled, in order. */
  private pending: string[] = [];
  private pendingChars = 0;
  private writeScheduled = false;
  private writing: Promise<void> | null = null;
  private writeError: unknown = null;

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
    if (this.writeError) throw this.writeError;
    const message = this.message ?? this.openMessage();
    message.text += delta;
    if (this.coalesce && this.writing && this.pending.length > 0) this.pending[this.pending.length - 1] += delta;
    else this.pending.push(delta);
    this.pendingChars += delta.length;
    if (this.pendingChars > MAX_PENDING_CHARS) {
      // Backpressure: a provider far faster than the store waits for the write.
      this.startWrite();
      await this.settle();
      return;
    }
    if (!this.writing && !this.writeScheduled) {
      this.writeScheduled = true;
      setImmediate(() => {
        this.writeScheduled = false;
        this.startWrite();
      });
    }
  }

  private startWrite(): void {
    if (this.writing || !this.message || this.pending.length === 0) return;
    this.writing = this.write().finally(() => {
      this.writing = null;
    });
  }

  /** Journals what is pending, then what arrived meanwhile, until nothing is; the first write also opens the message. */
  private async write(): Promise<void> {
    try {
      while (this.message && this.pending.length > 0) {
        const message = this.message;
        const deltas = this.pending.splice(0);
        this.pendingChars = 0;
        const events = deltas.map((delta): KernelEvent => ({
          type: 'text.delta',
          item_id: message.id,
          output_index: message.outputIndex,
          content_index: 0,
          delta,
        }));
        if (!message.announced) events.unshift(...openingEvents(message));
        await appendEvents(this.db, this.writer, events);
        message.announced = true;
      }
    } catch (error) {
      this.writeError = error;
    }
  }

  /** Waits until the write in flight (and what it picks up after) is journaled. */
  async settle(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.writeError) throw this.writeError;
  }

  /** `server`: Palai runs the call (the item says so), rather than the caller. */
  async toolCall(callId: string, name: string, args: string, server: boolean): Promise<void> {
    await this.closeMessage('completed');
    const outputIndex = this.nextIndex++;
    const item: FunctionCallItem = {
      id: outputItemId('fc', this.writer.responseId, outputIndex),
      type: 'function_call',
      call_id: callId,
      name,
      arguments: args,
      status: 'completed',
      ...(server ? { server: true } : {}),
    };
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

  /** The held events, handed to whoever journals them. */
  takeHeld(): HeldEvent[] {
    return this.held.splice(0);
  }

  /** Journals the held events; call inside the committing transaction. */
  async flush(tx: Queryable): Promise<void> {
    if (this.held.length === 0) return;
    await appendEvents(tx, this.writer, this.held);
    this.held.length = 0;
  }

  private openMessage(): OpenMessage {
    const outputIndex = this.nextIndex++;
    const message: OpenMessage = { id: outputItemId('msg', this.writer.responseId, outputIndex), outputIndex, text: '', announced: false };
    this.message = message;
    return message;
  }

  private async closeMessage(status: 'completed' | 'incomplete'): Promise<void> {
    const message = this.message;
    if (!message) return;
    await this.settle();
    this.message = null;
    // What no write has taken yet is journaled with the step.
    const unwritten = this.pending.splice(0);
    this.pendingChars = 0;
    if (!message.announced) this.held.push(...openingEvents(message));
    const part = { type: 'output_text' as const, text: message.text, annotations: [] };
    const where = { item_id: message.id, output_index: message.outputIndex, content_index: 0 };
    for (const delta of unwritten) this.held.push({ type: 'text.delta', ...where, delta });
    const item: MessageItem = { id: message.id, type: 'message', role: 'assistant', status, content: [part] };
    if (status === 'completed') {
      this.held.push({ type: 'text.done', ...where, text: message.text });
      this.held.push({ type: 'content.done', ...where, part });
    }
    this.held.push({ type: 'item.done', output_index: message.outputIndex, item });
    this.items.push(item);
  }
}

/** The events that open a message item, before its first delta. */
function openingEvents(message: OpenMessage): KernelEvent[] {
  const item: MessageItem = { id: message.id, type: 'message', role: 'assistant', status: 'in_progress', content: [] };
  return [
    { type: 'item.added', output_index: message.outputIndex, item },
    {
      type: 'content.added',
      item_id: message.id,
      output_index: message.outputIndex,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    },
  ];
}
