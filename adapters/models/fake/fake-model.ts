// The deterministic fake model. Without a script it echoes the last user message;
// with one, it plays step N, N being the model turns already in the conversation
// it is shown plus this response's model calls so far (past the end: echo), so a
// scripted agent answers alike whether a client chains responses or resends the
// history. Its call ids name the response, so no two responses share one.
// Text streams word by word: each delta is one word with its leading whitespace,
// so the deltas concatenate to exactly the text. An echo stops after
// ECHO_MAX_WORDS words, since each delta is a journal event: a 1 MB message
// would otherwise be hundreds of thousands of them.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FakeStep, Item } from '../../../generated/schemas.js';
import { ModelProviderError, type ModelAdapter, type ModelEvent, type ModelRequest } from '../../../core/models/model-port.js';
import { chosenStep } from './script-choice.js';

const WORD = /\s*\S+|\s+$/g;

export function splitWords(text: string): string[] {
  return text.match(WORD) ?? [];
}

/** The most words an echo repeats; a longer message is cut there and ECHO_CUT_MARK follows. */
export const ECHO_MAX_WORDS = 200;
/** The last delta of a cut echo. */
export const ECHO_CUT_MARK = ' …';

/**
 * The echo's deltas: splitWords of the message when it has at most
 * ECHO_MAX_WORDS words, else its first ECHO_MAX_WORDS and the cut mark. It stops
 * reading there, so a huge message is not split whole.
 */
export function echoWords(text: string): string[] {
  const pieces: string[] = [];
  let words = 0;
  for (const [piece] of text.matchAll(WORD)) {
    const isWord = piece.trim() !== '';
    if (isWord && words === ECHO_MAX_WORDS) return [...pieces, ECHO_CUT_MARK];
    pieces.push(piece);
    if (isWord) words++;
  }
  return pieces;
}

function lastUserText(items: Item[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item.type === 'message' && item.role === 'user') return item.content.map((p) => p.text).join('');
  }
  return '';
}

/** `call_fake_<response id's body>_<step>_<index>`: unique across responses, and within one by its step. */
export const fakeCallId = (request: Pick<ModelRequest, 'responseId' | 'stepIndex'>, index: number): string =>
  `call_fake_${request.responseId.replace(/^resp_/, '')}_${request.stepIndex}_${index}`;

const countTokens = (text: string): number => splitWords(text).filter((w) => w.trim() !== '').length;

function promptTokens(request: ModelRequest): number {
  let total = countTokens(request.instructions ?? '');
  for (const item of request.items) {
    if (item.type === 'message') total += countTokens(item.content.map((p) => p.text).join(' '));
    else if (item.type === 'function_call') total += countTokens(item.arguments);
    else total += countTokens(item.output);
  }
  return total;
}

export class FakeModel implements ModelAdapter {
  readonly provider = 'fake';
  readonly coalesceDeltas = false;

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const scripted: FakeStep | undefined = chosenStep(request) ?? request.model.script?.[request.stepIndex];
    const step: FakeStep = scripted ?? { text: lastUserText(request.items) };
    const delay = 'delay_ms' in step ? (step.delay_ms ?? 0) : 0;
    const pause = async () => {
      if (delay > 0) await sleep(delay, undefined, { signal: request.signal });
      request.signal.throwIfAborted();
    };
    const inputTokens = promptTokens(request);
    request.signal.throwIfAborted();

    if ('error' in step && !('text' in step)) {
      throw new ModelProviderError('fake', step.error.message, step.error.status);
    }
    if ('tool_calls' in step) {
      await pause();
      let index = 0;
      for (const call of step.tool_calls) {
        yield { type: 'tool_call', callId: fakeCallId(request, index++), name: call.name, arguments: JSON.stringify(call.arguments ?? {}) };
      }
      yield { type: 'usage', inputTokens, outputTokens: step.tool_calls.length, cachedTokens: 0 };
      yield { type: 'finish', reason: 'tool_calls' };
      return;
    }
    // A script's text is the test author's to size; only the echo is bounded.
    const text = 'json' in step ? JSON.stringify(step.json) : step.text;
    const words = scripted ? splitWords(text) : echoWords(text);
    for (const [i, word] of words.entries()) {
      if (i > 0) await pause();
      yield { type: 'text_delta', text: word };
    }
    if ('error' in step && step.error) throw new ModelProviderError('fake', step.error.message, step.error.status);
    yield { type: 'usage', inputTokens, outputTokens: words.length, cachedTokens: 0 };
    yield { type: 'finish', reason: 'stop' };
  }
}
