// The model broker port: a canonical request in, a canonical event stream out.
// Provider specifics (wire formats, SDKs, retries of their own) stay in adapters.
// The kernel decides where and as whom a call goes (credentials) and through
// what (the transport, its egress guard): an adapter uses what it is given.
import type { Item, ModelSpec } from '../../generated/schemas.js';
import { egressRefusalIn, type EgressFetch } from '../egress/egress-port.js';
import type { PalaiError } from '../errors/palai-error.js';

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** Where and as whom to call the provider, resolved by the broker (connection, spec or environment). */
export interface ModelCredentials {
  /** Never logged, never journaled. Null when the provider needs none (fake, a local server). */
  apiKey: string | null;
  /** The broker always says (the operator's provider URL by default); null only for the fake model, which calls nothing. */
  baseUrl: string | null;
}

export interface ModelRequest {
  model: ModelSpec;
  /** The provider's model id (the spec's name, else the connection's default model). */
  modelName: string | null;
  credentials: ModelCredentials;
  /**
   * The fetch every HTTP request of this call must go through (the SDK's `fetch`
   * option): the kernel's egress guard. It refuses private and local addresses
   * and never follows redirects.
   */
  transport: EgressFetch;
  instructions: string | null;
  /** The conversation so far, oldest first. */
  items: Item[];
  tools: ToolDefinition[];
  /** Whether the model must call a tool, and which one (`{name}`): each adapter in its provider's terms. */
  toolChoice?: 'auto' | 'none' | 'required' | { name: string };
  parallelToolCalls?: boolean;
  outputSchema?: Record<string, unknown>;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  /** The response this call is for (the fake model derives its call ids from it). */
  responseId: string;
  /**
   * The fake model's script cursor: the model turns of the conversation before
   * this response (however the client sent it), then this response's model calls so far.
   */
  stepIndex: number;
  /** The response's metadata (whatever its surface put there), for models that play scripts (the fake model's script choices). */
  metadata?: Record<string, string>;
  signal: AbortSignal;
}

export type ModelEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'tool_call'; callId: string; name: string; arguments: string }
  | { type: 'usage'; inputTokens: number; outputTokens: number; cachedTokens: number }
  | { type: 'finish'; reason: 'stop' | 'tool_calls' | 'length' };

export interface ModelAdapter {
  readonly provider: string;
  /**
   * Whether the kernel may join deltas that arrive while the previous one is
   * being journaled (default true). The fake model says false: its one-word
   * deltas are a contract tests rely on.
   */
  readonly coalesceDeltas?: boolean;
  stream(request: ModelRequest): AsyncIterable<ModelEvent>;
}

/**
 * A provider answered with an error, could not be reached, or its stream broke.
 * The message names the provider and the cause and never holds a secret.
 */
export class ModelProviderError extends Error {
  constructor(
    readonly provider: string,
    message: string,
    /** The HTTP status the provider answered; undefined for network failures and broken streams. */
    readonly providerStatus?: number,
    /** The provider's `retry-after`, in milliseconds, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ModelProviderError';
  }

  /** 429, 5xx, timeouts and broken connections are worth retrying; other answers will not change. */
  get retryable(): boolean {
    return this.providerStatus === undefined || this.providerStatus === 408 || this.providerStatus === 429 || this.providerStatus >= 500;
  }
}

/**
 * The transport's refusal (an `egress-denied` PalaiError) inside whatever an SDK
 * wrapped it in. Adapters rethrow it unchanged: the run ends with that code, not
 * as a provider failure to retry.
 */
export const transportRefusal = (error: unknown): PalaiError | null => egressRefusalIn(error);

/**
 * What a provider's 3xx means here: the transport follows no redirect, since its
 * target was never checked by the egress guard. Not retryable: the same call gets
 * the same answer.
 */
export function redirectNotFollowed(status: number, headers: Pick<Headers, 'get'> | undefined): string {
  const location = headers?.get('location');
  return `answered ${status} redirecting to ${location ? JSON.stringify(location) : 'no Location'}; redirects are not followed`;
}

export class ModelRegistry {
  private readonly adapters = new Map<string, ModelAdapter>();

  register(adapter: ModelAdapter): this {
    this.adapters.set(adapter.provider, adapter);
    return this;
  }

  get(provider: string): ModelAdapter {
    const adapter = this.adapters.get(provider);
    if (!adapter) throw new ModelProviderError(provider, `No model adapter is registered for provider "${provider}".`);
    return adapter;
  }
}
