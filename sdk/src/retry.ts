// Retries with backoff, below openapi-fetch: a 429 and the 503s that pass
// (Palai's store outage, a stopping process, a hub not ready yet), and a
// connection that failed. Every POST carries an Idempotency-Key (the caller's,
// or one made here), so a retried POST answers with the first attempt's result
// and never runs a second response.
import { PalaiConnectionError, problemSlug } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  maxRetries?: number;
  /** The first backoff; each retry doubles it, with jitter (default 250 ms). */
  baseDelayMs?: number;
  /** No wait is longer, `Retry-After` included (default 8 s). */
  maxDelayMs?: number;
}

/** The 503 problems a retry can help (docs/errors.md: `later (outage)`). */
const PASSING_OUTAGES = new Set(['store-unavailable', 'shutting-down', 'not-ready']);

/** An Idempotency-Key for a POST that has none: 128 random bits, so unique per logical request. */
export function newIdempotencyKey(): string {
  // Not randomUUID: browsers give it to secure contexts only (a hub on plain http on a LAN is not one).
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `sdk-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

async function worthRetrying(response: Response): Promise<boolean> {
  if (response.status === 429) return true;
  if (response.status !== 503) return false;
  try {
    const body = (await response.clone().json()) as { type?: unknown };
    return typeof body.type !== 'string' || PASSING_OUTAGES.has(problemSlug(body.type));
  } catch {
    // A 503 without a problem (a proxy in front of the hub): it passes too.
    return true;
  }
}

/** Milliseconds the server asked to wait (`Retry-After` in seconds or as a date), if it did. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const raw = headers.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function backoffMs(retry: number, options: Required<RetryOptions>): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** retry);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function retryDefaults(options: RetryOptions = {}): Required<RetryOptions> {
  return { maxRetries: options.maxRetries ?? 3, baseDelayMs: options.baseDelayMs ?? 250, maxDelayMs: options.maxDelayMs ?? 8000 };
}

/** A request may be sent again when repeating it cannot do the work twice. */
function repeatable(request: Request): boolean {
  return request.method !== 'POST' || request.headers.has('idempotency-key');
}

/** `fetch` with the retries above; the request's signal stops the waiting too. */
export function retryingFetch(fetchImpl: typeof fetch, options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const settings = retryDefaults(options);
  return async (request: Request) => {
    for (let retry = 0; ; retry++) {
      const last = retry >= settings.maxRetries || !repeatable(request);
      // A body is read once: every attempt but the last sends a copy.
      const attempt = last ? request : request.clone();
      let response: Response;
      try {
        response = await fetchImpl(attempt);
      } catch (error) {
        if (request.signal.aborted) throw request.signal.reason ?? error;
        if (last) throw new PalaiConnectionError(`${request.method} ${request.url} failed: ${(error as Error).message}`, { cause: error });
        await sleep(backoffMs(retry, settings), request.signal);
        continue;
      }
      if (last || !(await worthRetrying(response))) return response;
      const wait = Math.min(settings.maxDelayMs, retryAfterMs(response.headers) ?? backoffMs(retry, settings));
      await response.body?.cancel().catch(() => undefined);
      await sleep(wait, request.signal);
    }
  };
}
