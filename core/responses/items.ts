// Conversation items in OpenAI's Responses shapes. Input as callers send it
// (a string, or items whose content may be a plain string) becomes stored items
// with ids and typed content parts.
import { isItemReference } from './item-references.js';
import type { CreateResponseRequest, InputFunctionCallOutput, InputItem, InputMcpCall, Item, MessageItem, ResponseInputItem } from '../../generated/schemas.js';
import { PalaiError } from '../errors/palai-error.js';
import { newId } from '../ids.js';

/** `pointer` locates the input in the request, for the error about an item that only answers a wait. */
export function normalizeInput(input: CreateResponseRequest['input'], pointer = '/input'): Item[] {
  if (typeof input === 'string') return [userMessage(input)];
  return input.flatMap((item, index) => normalizeItem(conversationItem(item, `${pointer}/${index}`)));
}

/**
 * An approval response is an answer to a waiting response, never a conversation item. An item reference
 * is resolved at admission (item-references.ts) before this, so one here has no item it could stand for.
 */
function conversationItem(item: ResponseInputItem, pointer: string): InputItem {
  if (isItemReference(item)) {
    throw new PalaiError('invalid-request', 'An item_reference names a stored item only in a request that admits a run.', {
      errors: [{ pointer, detail: 'is not resolved here' }],
    });
  }
  if (item.type !== 'mcp_approval_response') return item;
  throw new PalaiError(
    'invalid-request',
    'An mcp_approval_response answers a response that waits for approval: send it with that response as previous_response_id.',
    {
      errors: [{ pointer, detail: 'answers no waiting response here' }],
    },
  );
}

export function userMessage(text: string): MessageItem {
  return { id: newId('msg'), type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text }] };
}

function normalizeItem(item: InputItem): Item | Item[] {
  if ('role' in item) {
    const partType = item.role === 'assistant' ? 'output_text' : 'input_text';
    const parts = typeof item.content === 'string' ? [{ type: partType, text: item.content }] : item.content;
    return {
      id: newId('msg'),
      type: 'message',
      role: item.role,
      status: 'completed',
      content: parts.map((p) => (p.type === 'output_text' ? { type: 'output_text', text: p.text, annotations: [] } : { type: 'input_text', text: p.text })),
    };
  }
  if (item.type === 'function_call') {
    return { id: newId('fc'), type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments, status: 'completed' };
  }
  if (item.type === 'mcp_call') return ranCall(item);
  return { id: newId('fc'), type: 'function_call_output', call_id: item.call_id, output: item.output, status: 'completed' };
}

/** An mcp_call of Palai's, sent back in a history: the call Palai ran (marked `server`) and, when it has one, its output. */
function ranCall(item: InputMcpCall): Item[] {
  const callId = item.id ?? newId('call');
  const call: Item = { id: newId('fc'), type: 'function_call', call_id: callId, name: item.name, arguments: item.arguments, status: 'completed', server: true };
  const output = item.output ?? item.error;
  if (output === null || output === undefined) return [call];
  return [call, { id: newId('fc'), type: 'function_call_output', call_id: callId, output, status: 'completed' }];
}

/** Text of the completed assistant messages, joined (OpenAI's `output_text`). */
export function outputText(items: Item[]): string {
  return items
    .flatMap((item) => (item.type === 'message' && item.role === 'assistant' && item.status !== 'incomplete' ? item.content : []))
    .map((part) => (part.type === 'output_text' ? part.text : ''))
    .join('');
}

/** All the text of a message item (input or output parts). */
export function messageText(item: MessageItem): string {
  return item.content.map((part) => part.text).join('');
}

/** Items a model should see: an incomplete (cut-off) item was retried and is not part of the conversation. */
export const conversationItems = (items: Item[]): Item[] => items.filter((item) => item.status !== 'incomplete');

/**
 * How many model turns the conversation holds: each assistant message is one,
 * and so is each run of function calls (one turn may propose several). A
 * scripted model's position follows it, however the client sent the history.
 */
export function modelTurns(items: Item[]): number {
  let turns = 0;
  items.forEach((item, index) => {
    if (item.type === 'message' && item.role === 'assistant') turns++;
    else if (item.type === 'function_call' && items[index - 1]?.type !== 'function_call') turns++;
  });
  return turns;
}

/** The function_call_output items the input ends with: a client's answers to the calls its last turn proposed. */
export function trailingCallOutputs(input: ResponseInputItem[]): InputFunctionCallOutput[] {
  let start = input.length;
  while (start > 0 && input[start - 1].type === 'function_call_output') start--;
  return input.slice(start).filter((item): item is InputFunctionCallOutput => item.type === 'function_call_output');
}
