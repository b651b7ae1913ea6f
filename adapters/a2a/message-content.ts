// What a client's A2A message says, read into what the kernel takes: text parts
// as text, data parts as their JSON (so structured input reaches the model), in
// order. Files are refused: Palai agents read text. Limits keep one message
// within what a Palai input holds.
import type { Message, Part } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';

/** The longest text one part may carry (and a whole message, joined): Palai's input limit. */
export const MAX_PART_CHARS = 1_048_576;
export const MAX_PARTS = 100;
/** A messageId is an inbox key, kept shorter than the inbox's 255. */
export const MAX_MESSAGE_ID_CHARS = 200;

export interface MessageContent {
  /** The parts as one text: text parts as written, data parts as JSON, separated by blank lines. */
  text: string;
  /** The data parts' values, in order (answers to a waiting task are read from them). */
  data: unknown[];
  /** The text parts alone. */
  texts: string[];
}

function partText(part: Part, index: number): { text?: string; data?: unknown } {
  const content = part.content;
  switch (content?.$case) {
    case 'text':
      return { text: content.value };
    case 'data':
      return { data: content.value ?? null };
    case 'raw':
    case 'url':
      throw new ContentTypeNotSupportedError(`Part ${index} is a file (${part.mediaType || 'no media type'}); this agent reads text and data parts only.`);
    case undefined:
      throw new RequestMalformedError(`Part ${index} has no content.`);
    default: {
      const unknown: never = content;
      throw new RequestMalformedError(`Part ${index} has an unknown kind ${JSON.stringify(unknown)}.`);
    }
  }
}

export function checkMessageId(messageId: string): void {
  if (messageId.length === 0) throw new RequestMalformedError('message.messageId is required.');
  if (messageId.length > MAX_MESSAGE_ID_CHARS || /[\x00-\x1f\x7f]/.test(messageId)) {
    throw new RequestMalformedError(`message.messageId must be 1 to ${MAX_MESSAGE_ID_CHARS} characters without control characters.`);
  }
}

/** Reads and checks a client message's parts; nothing is stored before this passes. */
export function readMessage(message: Message): MessageContent {
  checkMessageId(message.messageId);
  if (message.parts.length === 0) throw new RequestMalformedError('message.parts must hold at least one part.');
  if (message.parts.length > MAX_PARTS)
    throw new RequestMalformedError(`message.parts holds ${message.parts.length} parts; at most ${MAX_PARTS} are accepted.`);
  const pieces: string[] = [];
  const data: unknown[] = [];
  const texts: string[] = [];
  for (const [index, part] of message.parts.entries()) {
    const read = partText(part, index);
    const text = read.text ?? JSON.stringify(read.data);
    if (text.length > MAX_PART_CHARS) throw new RequestMalformedError(`Part ${index} holds ${text.length} characters; at most ${MAX_PART_CHARS} are accepted.`);
    if (read.text !== undefined) texts.push(read.text);
    else data.push(read.data);
    pieces.push(text);
  }
  const text = pieces.join('\n\n');
  if (text.length > MAX_PART_CHARS) throw new RequestMalformedError(`The message holds ${text.length} characters; at most ${MAX_PART_CHARS} are accepted.`);
  // Text the store cannot keep is refused at the kernel's boundary (validation-failed: InvalidParams), like every argument.
  return { text, data, texts };
}
