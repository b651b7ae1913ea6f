// One OpenAI SDK client per model call, built only from the broker's credentials
// and transport (the kernel's egress-guarded fetch, which follows no redirect),
// and the guard every streamed call runs through: the kernel owns retries, the
// caller's signal cancels the HTTP request, and silence from the provider times out.
import OpenAI from 'openai';
import { ModelProviderError, transportRefusal, type ModelCredentials, type ModelRequest } from '../../../core/models/model-port.js';
import { toProviderError } from './openai-errors.js';

/** Sent when the connection has no key: local servers ignore it, and the SDK refuses to run without one. */
export const NO_API_KEY = 'palai-no-key';
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** Default of the adapters' `timeoutMs`: how long the provider may stay silent. */
export const DEFAULT_TIMEOUT_MS = 120_000;

export function openAIClient(credentials: ModelCredentials, transport: ModelRequest['transport'], timeoutMs: number): OpenAI {
  // Every option the SDK would otherwise read from OPENAI_* environment variables is set,
  // so the broker's resolution is the only source of where and as whom we call.
  return new OpenAI({
    apiKey: credentials.apiKey ?? NO_API_KEY,
    baseURL: credentials.baseUrl ?? OPENAI_BASE_URL,
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: 0,
    timeout: timeoutMs,
    fetch: transport,
  });
}

/**
 * Aborts when a wait on the provider lasts longer than `ms`. The SDK's own timeout
 * ends once response headers arrive, so a stream that stalls afterwards needs this.
 */
class SilenceTimer {
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;

  constructor(private readonly ms: number) {}

  get fired(): boolean {
    return this.signal.aborted;
  }

  async wait<T>(promise: Promise<T>): Promise<T> {
    const timer = setTimeout(() => this.controller.abort(), this.ms);
    try {
      return await promise;
    } finally {
      clearTimeout(timer);
    }
  }
}

interface SdkStream<T> extends AsyncIterable<T> {
  controller: AbortController;
}

export interface GuardedCall {
  provider: string;
  credentials: ModelCredentials;
  transport: ModelRequest['transport'];
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * The SDK's events of one streamed call. Throws the caller's abort reason unwrapped
 * when it cancels, the transport's egress refusal as it is, and ModelProviderError
 * for everything the provider or network did.
 * A stream that merely ends is returned as ended: the caller judges whether it was complete.
 */
export async function* guardedStream<T>(call: GuardedCall, open: (client: OpenAI, signal: AbortSignal) => Promise<SdkStream<T>>): AsyncGenerator<T> {
  const silence = new SilenceTimer(call.timeoutMs);
  const signal = AbortSignal.any([call.signal, silence.signal]);
  const failure = (error: unknown): unknown => {
    // The SDK reports an abort as APIUserAbortError, or mid-stream by just ending.
    if (call.signal.aborted) return call.signal.reason;
    if (silence.fired) return new ModelProviderError(call.provider, `no answer for ${call.timeoutMs / 1000}s; the request timed out`);
    return transportRefusal(error) ?? toProviderError(call.provider, error, call.credentials.apiKey);
  };

  let stream: SdkStream<T> | undefined;
  try {
    call.signal.throwIfAborted();
    stream = await silence.wait(open(openAIClient(call.credentials, call.transport, call.timeoutMs), signal));
    const iterator = stream[Symbol.asyncIterator]();
    for (;;) {
      const next = await silence.wait(iterator.next());
      if (next.done) break;
      yield next.value;
    }
  } catch (error) {
    throw failure(error);
  } finally {
    // The consumer stopped early or something threw: close the HTTP request (a no-op once it ended).
    stream?.controller.abort();
  }
  if (call.signal.aborted || silence.fired) throw failure(undefined);
}

/** Tool call arguments as JSON text; servers send '' for a call without arguments. */
export const toolArguments = (text: string | null | undefined): string => (text && text.trim() !== '' ? text : '{}');

/** The name OpenAI requires for a JSON Schema output format (^[a-zA-Z0-9_-]{1,64}$). */
export function outputFormatName(schema: Record<string, unknown>): string {
  const title = typeof schema.title === 'string' ? schema.title.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64) : '';
  return title.replace(/^_+|_+$/g, '') || 'output';
}
