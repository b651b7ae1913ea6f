// Building canonical model requests and draining adapters, for the OpenAI adapter tests.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { ModelProviderError, type ModelAdapter, type ModelEvent, type ModelRequest } from '../../../core/models/model-port.js';
import type { Item } from '../../../generated/schemas.js';
import { testTransport } from './transport.js';

/** Recognisable, so a test can prove it never leaks into a message. */
export const FAKE_API_KEY = 'sk-palai-test-9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c';

export const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

export const user = (text: string, id = 'msg_u1'): Item => ({ id, type: 'message', role: 'user', content: [{ type: 'input_text', text }] });

export function modelRequest(baseUrl: string | null, modelName: string, overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: { provider: 'openai', name: modelName },
    modelName,
    credentials: { apiKey: FAKE_API_KEY, baseUrl },
    transport: testTransport,
    instructions: null,
    items: [user('What is the capital of France?')],
    tools: [],
    responseId: 'resp_test',
    stepIndex: 0,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** Every event the adapter yields, and what it threw (null when it finished). */
export async function drain(adapter: ModelAdapter, request: ModelRequest): Promise<{ events: ModelEvent[]; error: unknown }> {
  const events: ModelEvent[] = [];
  try {
    for await (const event of adapter.stream(request)) events.push(event);
    return { events, error: null };
  } catch (error) {
    return { events, error };
  }
}

export const textOf = (events: ModelEvent[]): string => events.map((e) => (e.type === 'text_delta' ? e.text : '')).join('');

/** Asserts `error` is the adapter's ModelProviderError for `provider`, carrying no trace of the API key. */
export function expectProviderError(error: unknown, provider: string): ModelProviderError {
  assert.ok(error instanceof ModelProviderError, `expected a ModelProviderError, got ${inspect(error)}`);
  assert.equal(error.provider, provider);
  assert.ok(!inspect(error).includes(FAKE_API_KEY), 'the error must not carry the API key');
  return error;
}

export const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms}ms`)), ms).unref())]);
