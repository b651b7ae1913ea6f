// The REST projection of the journal: each kernel event becomes one OpenAI
// Responses stream event with the same sequence number, so SSE ids stay the
// journal's sequences and a client resumes anywhere. Status events are named
// by the table in openai-status.ts, in the vocabulary the client asked for.
import type { JournalEntry } from '../../core/api/index.js';
import type { OutputTextPart, ResponseStreamEvent } from '../../generated/schemas.js';
import { openAiResponse } from './openai-response.js';
import { statusEvent, type EventVocabulary } from './openai-status.js';

export function openAiStreamEvent({ sequence, event }: JournalEntry, vocabulary: EventVocabulary = 'openai'): ResponseStreamEvent {
  const sequence_number = sequence;
  switch (event.type) {
    case 'status':
      return { type: statusEvent(event.status, vocabulary), sequence_number, response: openAiResponse(event.response) };
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
