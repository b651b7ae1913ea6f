// The `anthropic` provider: Anthropic's Messages API through the official SDK, streamed.
// One client per request, built from the request's credentials and transport (the
// kernel's egress-guarded fetch, which follows no redirect) and nothing ambient;
// the SDK never retries (the kernel retries a failed step as a fresh one). The timeout
// bounds the wait for the answer's headers and then for each next stream event.
import Anthropic from '@anthropic-ai/sdk';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { ModelProviderError, transportRefusal, type ModelAdapter, type ModelEvent, type ModelRequest } from '../../../core/models/model-port.js';
import { PROVIDER, toProviderError } from './provider-errors.js';
import { toMessagesParams } from './request-mapping.js';
import { MessageStreamReader } from './stream-reader.js';

export interface AnthropicModelOptions {
  /** Milliseconds to wait for the answer's headers, and then for each next stream event. Default: 120000. */
  timeoutMs?: number;
  /** `max_tokens` for requests that set no maxOutputTokens (Anthropic requires one). Default: 4096. */
  defaultMaxTokens?: number;
}

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
/** Sent when there is no key (a local server needs none): the SDK will not send a request without a credential. */
const NO_KEY = 'no-key';

/** The SDK appends /v1/messages itself, so a base URL given as `.../v1` (as for OpenAI) loses that suffix. */
export function baseUrlOf(baseUrl: string | null): string {
  if (!baseUrl) return DEFAULT_BASE_URL;
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

export class AnthropicModel implements ModelAdapter {
  readonly provider = PROVIDER;
  private readonly timeoutMs: number;
  private readonly defaultMaxTokens: number;

  constructor(options: AnthropicModelOptions = {}) {
    // The SDK accepts whole milliseconds only.
    this.timeoutMs = Math.max(1, Math.round(options.timeoutMs ?? 120_000));
    this.defaultMaxTokens = options.defaultMaxTokens ?? 4096;
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    request.signal.throwIfAborted();
    if (!request.modelName) {
      throw new ModelProviderError(PROVIDER, "no model name: set the model's `name` or the connection's `default_model`", 400);
    }
    const params = toMessagesParams(request, request.modelName, { maxTokens: this.defaultMaxTokens });
    const secret = request.credentials.apiKey;
    // Credentials and base URL are given explicitly, so the SDK reads no ANTHROPIC_* variable or profile file for them.
    const client = new Anthropic({
      apiKey: secret ?? NO_KEY,
      authToken: null,
      webhookKey: null,
      baseURL: baseUrlOf(request.credentials.baseUrl),
      maxRetries: 0,
      timeout: this.timeoutMs,
      logLevel: 'off',
      fetch: request.transport,
    });

    // One signal for the SDK: the caller's cancellation, or no stream event within the timeout.
    const stop = new AbortController();
    const cancel = () => stop.abort(request.signal.reason);
    request.signal.addEventListener('abort', cancel, { once: true });
    let idleTimer: NodeJS.Timeout | undefined;
    let idle = false;
    const awaitEvent = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        idle = true;
        stop.abort();
      }, this.timeoutMs);
    };
    const failure = (error: unknown, phase: 'request' | 'stream'): unknown => {
      if (request.signal.aborted) return request.signal.reason;
      if (idle) return new ModelProviderError(PROVIDER, `no stream event for ${this.timeoutMs / 1000}s`);
      return transportRefusal(error) ?? toProviderError(error, secret, this.timeoutMs, phase);
    };

    const reader = new MessageStreamReader();
    let events: AsyncIterator<RawMessageStreamEvent> | undefined;
    try {
      try {
        events = (await client.messages.create(params, { signal: stop.signal }))[Symbol.asyncIterator]();
      } catch (error) {
        throw failure(error, 'request');
      }
      for (;;) {
        awaitEvent();
        let next: IteratorResult<RawMessageStreamEvent>;
        try {
          next = await events.next();
        } catch (error) {
          throw failure(error, 'stream');
        } finally {
          // The clock runs while the provider is awaited, not while the caller handles an event.
          clearTimeout(idleTimer);
        }
        // The SDK ends the iteration quietly when its signal aborts.
        if (next.done) break;
        yield* reader.read(next.value);
        // Nothing follows message_stop; what the connection does afterwards does not matter.
        if (reader.stopped) break;
      }
      if (request.signal.aborted || idle) throw failure(undefined, 'stream');
      if (!reader.stopped) throw new ModelProviderError(PROVIDER, 'stream broke: it ended before message_stop');
    } catch (error) {
      // The provider counted the prompt even though the answer failed.
      yield* reader.usage();
      throw error;
    } finally {
      clearTimeout(idleTimer);
      request.signal.removeEventListener('abort', cancel);
      // Closes the HTTP request when the stream did not run to its end.
      await events?.return?.();
    }
  }
}
