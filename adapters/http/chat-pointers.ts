// A chat request runs as a Responses request (chat-request.ts), so the kernel's
// errors name that request's fields; a chat client reads them against what it
// sent instead: its response_format's json_schema and its tools' functions.
import { isPalaiError, PalaiError } from '../../core/errors/palai-error.js';

/** A Responses field's pointer prefix, and the chat request's field it came from. */
const CHAT_FIELDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\/text\/format\/(?!type(?:\/|$))/, '/response_format/json_schema/'],
  [/^\/text\/format(?=\/|$)/, '/response_format'],
  [/^\/tools\/(\d+)\/(?!type(?:\/|$))/, '/tools/$1/function/'],
];

export function chatPointer(pointer: string): string {
  const field = CHAT_FIELDS.find(([pattern]) => pattern.test(pointer));
  return field ? pointer.replace(field[0], field[1]) : pointer;
}

/** `error`, its fields named as the chat request names them. */
export function inChatTerms(error: unknown): unknown {
  if (!isPalaiError(error) || error.errors === undefined) return error;
  const errors = error.errors.map((e) => ({ ...e, pointer: chatPointer(e.pointer) }));
  return new PalaiError(error.slug, error.message, { errors, extensions: error.extensions, cause: error.cause });
}
