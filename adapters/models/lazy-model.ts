// A provider's adapter, loaded with its SDK on the first call to that provider:
// a hub that only ever uses one provider (or the fake model) never loads the
// others' SDKs, which are tens of MB of memory each. A load that fails fails
// that call and is tried again at the next.
import { lazyOnce } from '../../core/api/index.js';
import type { ModelAdapter, ModelEvent, ModelRequest } from '../../core/models/model-port.js';

export function lazyModel(provider: string, load: () => Promise<ModelAdapter>): ModelAdapter {
  const adapter = lazyOnce(load);
  return {
    provider,
    async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
      yield* (await adapter()).stream(request);
    },
  };
}
