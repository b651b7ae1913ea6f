// The A2A projection of the journal: a reader folds a response's kernel events
// into the task as it stands, and each event becomes the stream updates it
// implies. `status` events carry the whole response; item and text events edit
// its output in place, so the answer artifact follows the text as it streams:
// text that grows is sent as an `append`, text that changed otherwise (an
// answer the output contract set aside) replaces the artifact.
import { Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { JournalEntry, ResponseState } from '../../core/api/index.js';
import type { Item } from '../../generated/schemas.js';
import { answerArtifact, answerParts, taskStatus, toTask, type TaskViewOptions } from './task-view.js';

/** The answer's text, or its other parts (as JSON), as last sent, to tell an append from a replacement. */
type Sent = { kind: 'none' } | { kind: 'text'; text: string } | { kind: 'data'; json: string };

export class TaskStream {
  private state: ResponseState | null = null;
  private sent: Sent = { kind: 'none' };
  /** The last sequence folded in; a reader follows the journal after it. */
  sequence = -1;

  constructor(private readonly view: TaskViewOptions) {}

  /** The task as folded so far; its answer counts as sent. */
  task(): Task {
    const state = this.current();
    this.sent = this.sentOf(state);
    return toTask(state, this.view);
  }

  status(): ResponseState['status'] {
    return this.current().status;
  }

  /** Folds one journal entry in and returns the updates it implies, in order. */
  apply({ sequence, event }: JournalEntry): StreamResponse[] {
    this.sequence = sequence;
    if (event.type === 'status') {
      this.state = structuredClone(event.response);
      const artifact = this.artifactUpdate();
      const status: StreamResponse = {
        payload: {
          $case: 'statusUpdate',
          value: { taskId: this.state.id, contextId: this.state.session_id ?? '', status: taskStatus(this.state), metadata: undefined },
        },
      };
      // The answer's last words come before the status that ends the task.
      return artifact ? [artifact, status] : [status];
    }
    const output = this.current().output;
    switch (event.type) {
      case 'item.added':
      case 'item.done':
      case 'item.updated':
        output[event.output_index] = structuredClone(event.item);
        break;
      case 'content.added':
      case 'content.done':
        messageAt(output, event.output_index).content[event.content_index] = structuredClone(event.part);
        break;
      case 'text.delta': {
        const content = messageAt(output, event.output_index).content;
        content[event.content_index] ??= { type: 'output_text', text: '', annotations: [] };
        content[event.content_index].text += event.delta;
        break;
      }
      case 'text.done': {
        const part = messageAt(output, event.output_index).content[event.content_index];
        if (part) part.text = event.text;
        break;
      }
      default: {
        const unknown: never = event;
        throw new Error(`unknown kernel event ${JSON.stringify(unknown)}`);
      }
    }
    const artifact = this.artifactUpdate();
    return artifact ? [artifact] : [];
  }

  private current(): ResponseState {
    if (!this.state) throw new Error('a response journal starts with its queued status event');
    return this.state;
  }

  private sentOf(state: ResponseState): Sent {
    const parts = answerParts(state, this.view.shape);
    const content = parts?.[0]?.content;
    if (!parts || !content) return { kind: 'none' };
    if (parts.length === 1 && content.$case === 'text') return { kind: 'text', text: content.value };
    return { kind: 'data', json: JSON.stringify(parts.map((part) => Part.toJSON(part))) };
  }

  private artifactUpdate(): StreamResponse | null {
    const state = this.current();
    const before = this.sent;
    const now = this.sentOf(state);
    this.sent = now;
    const update = (parts: ReturnType<typeof answerParts>, append: boolean): StreamResponse => ({
      payload: {
        $case: 'artifactUpdate',
        value: { taskId: state.id, contextId: state.session_id ?? '', artifact: answerArtifact(parts ?? []), append, lastChunk: false, metadata: undefined },
      },
    });
    if (now.kind === 'none') return null;
    if (now.kind === 'text' && before.kind === 'text') {
      if (now.text === before.text) return null;
      if (now.text.startsWith(before.text))
        return update([{ ...answerParts(state, 'text')![0], content: { $case: 'text', value: now.text.slice(before.text.length) } }], true);
    }
    if (now.kind === 'data' && before.kind === 'data' && now.json === before.json) return null;
    return update(answerParts(state, this.view.shape), false);
  }
}

function messageAt(output: Item[], index: number): Extract<Item, { type: 'message' }> {
  const item = output[index];
  if (item?.type !== 'message') throw new Error(`content event for output ${index}, which is not a message`);
  return item;
}
