// A provider's adapter, loaded with its SDK on the first call to that provider:
// a hub that only ever uses one provider (or the fake model) never loads the
// others' SDKs, which are tens of MB of memory each.
import type { ModelAdapter, ModelEvent, ModelRequest } from '../../core/models/model-port.js';

export function lazyModel(provider: string, load: () => Promise<ModelAdapter>): ModelAdapter {
  let adapter: Promise<ModelAdapter> | null = null;
  return {
    provider,
    async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
      adapter ??= load();
      yield* (await adapter).stream(request);
    },
  };
}
