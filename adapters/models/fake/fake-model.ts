// The deterministic fake model. Without a script it echoes the last user message;
// with one, the N-th model call of a response plays step N (past the end: echo).
// Text streams word by word: each delta is one word with its leading whitespace,
// so the deltas concatenate to exactly the text.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FakeStep, Item } from '../../../generated/schemas.js';
import { ModelProviderError, type ModelAdapter, type ModelEvent, type ModelRequest } from '../../../core/models/model-port.js';

export function splitWords(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

function lastUserText(items: Item[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item.type === 'message' && item.role === 'user') return item.content.map((p) => p.text).join('');
  }
  return '';
}

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
    const step: FakeStep = request.model.script?.[request.stepIndex] ?? { text: lastUserText(request.items) };
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
        yield { type: 'tool_call', callId: `call_fake_${request.stepIndex}_${index++}`, name: call.name, arguments: JSON.stringify(call.arguments ?? {}) };
      }
      yield { type: 'usage', inputTokens, outputTokens: step.tool_calls.length, cachedTokens: 0 };
      yield { type: 'finish', reason: 'tool_calls' };
      return;
    }
    const text = 'json' in step ? JSON.stringify(step.json) : step.text;
    const words = splitWords(text);
    for (const [i, word] of words.entries()) {
      if (i > 0) await pause();
      yield { type: 'text_delta', text: word };
    }
    if ('error' in step && step.error) throw new ModelProviderError('fake', step.error.message, step.error.status);
    yield { type: 'usage', inputTokens, outputTokens: words.length, cachedTokens: 0 };
    yield { type: 'finish', reason: 'stop' };
  }
}
