// The model broker port: a canonical request in, a canonical event stream out.
// Provider specifics (wire formats, SDKs, retries of their own) stay in adapters.
import type { Item, ModelSpec } from '../../generated/schemas.js';

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  model: ModelSpec;
  instructions: string | null;
  /** The conversation so far, oldest first. */
  items: Item[];
  tools: ToolDefinition[];
  toolChoice?: 'auto' | 'none' | 'required';
  parallelToolCalls?: boolean;
  outputSchema?: Record<string, unknown>;
  maxOutputTokens?: number;
  temperature?: number;
  /** How many model calls of this response already committed (the fake model's script cursor). */
  stepIndex: number;
  signal: AbortSignal;
}

export type ModelEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'tool_call'; callId: string; name: string; arguments: string }
  | { type: 'usage'; inputTokens: number; outputTokens: number; cachedTokens: number }
  | { type: 'finish'; reason: 'stop' | 'tool_calls' | 'length' };

export interface ModelAdapter {
  readonly provider: string;
  stream(request: ModelRequest): AsyncIterable<ModelEvent>;
}

/** A provider answered with an error (or could not be reached). The message never holds secrets. */
export class ModelProviderError extends Error {
  constructor(
    readonly provider: string,
    message: string,
    readonly providerStatus?: number,
  ) {
    super(message);
    this.name = 'ModelProviderError';
  }

  /** 429 and 5xx are worth retrying; other answers will not change. */
  get retryable(): boolean {
    return this.providerStatus === undefined || this.providerStatus === 429 || this.providerStatus >= 500;
  }
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
