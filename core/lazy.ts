// A value made by an asynchronous load (usually an import of an SDK) the first
// time it is asked for, not when the process starts. Concurrent first callers
// share the one load; a load that fails is forgotten, so the next call tries
// again instead of failing until the process restarts.

export interface LazyOnce<T> {
  (): Promise<T>;
  /** What the load gave, if it has succeeded; null when it never ran or failed. Never starts a load. */
  ifLoaded(): Promise<T | null>;
}

export function lazyOnce<T>(load: () => Promise<T>): LazyOnce<T> {
  let pending: Promise<T> | null = null;
  const get = (): Promise<T> =>
    (pending ??= load().catch((error: unknown) => {
      pending = null;
      throw error;
    }));
  return Object.assign(get, { ifLoaded: async () => (pending ? pending.catch(() => null) : null) });
}
