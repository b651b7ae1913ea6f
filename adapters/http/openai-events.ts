// The REST projection of the journal: each kernel event becomes one OpenAI
// Responses stream event with the same sequence number, so SSE ids stay the
// journal's sequences and a client resumes anywhere. This table is the one
// place kernel statuses get OpenAI's event names.
import type { JournalEntry, ResponseStatus } from '../../core/api/index.js';
import { TERMINAL_STATUSES } from '../../core/api/index.js';
import type { OutputTextPart, ResponseLifecycleEvent, ResponseStreamEvent } from '../../generated/schemas.js';
import { openAiResponse } from './openai-response.js';

const STATUS_EVENT: Record<ResponseStatus, ResponseLifecycleEvent['type']> = {
  queued: 'response.created',
  in_progress: 'response.in_progress',
  waiting_for_approval: 'response.waiting_for_approval',
  waiting_for_tool: 'response.waiting_for_tool',
  waiting_for_input: 'response.waiting_for_input',
  completed: 'response.completed',
  failed: 'response.failed',
  canceled: 'response.cancelled',
  timed_out: 'response.incomplete',
  budget_exceeded: 'response.incomplete',
};

/** The stream events that end a response's stream: exactly one per response. */
export const TERMINAL_STREAM_EVENTS: ReadonlySet<string> = new Set(TERMINAL_STATUSES.map((status) => STATUS_EVENT[status]));

export function openAiStreamEvent({ sequence, event }: JournalEntry): ResponseStreamEvent {
  const sequence_number = sequence;
  switch (event.type) {
    case 'status':
      return { type: STATUS_EVENT[event.status], sequence_number, response: openAiResponse(event.response) };
    case 'item.added':
      return { type: 'response.output_item.added', sequence_number, output_index: event.output_index, item: event.item };
    // OpenAI has no event for a finished item that changes again; its new final state is a second `done`.
    case 'item.done':
    case 'item.updated':
      return { type: 'response.output_item.done', sequence_number, output_index: event.output_index, item: event.item };
    case 'content.added':
    case 'content.done': {
      const type = event.type === 'content.added' ? 'response.content_part.added' : 'response.content_part.done';
      const { item_id, output_index, content_index } = event;
      return { type, sequence_number, item_id, output_index, content_index, part: event.part as OutputTextPart };
    }
    case 'text.delta': {
      const { item_id, output_index, content_index, delta } = event;
      return { type: 'response.output_text.delta', sequence_number, item_id, output_index, content_index, delta, logprobs: [] };
    }
    case 'text.done': {
      const { item_id, output_index, content_index, text } = event;
      return { type: 'response.output_text.done', sequence_number, item_id, output_index, content_index, text, logprobs: [] };
    }
    default: {
      const unknown: never = event;
      throw new Error(`unknown kernel event ${JSON.stringify(unknown)}`);
    }
  }
}
