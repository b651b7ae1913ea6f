// SDK failures as ModelProviderError: an HTTP error answer keeps its status and
// retry-after (a 3xx says its redirect was not followed), an `error` event inside
// a stream gets the status Anthropic documents for its type, and connection
// failures, timeouts and broken streams get none (so the kernel retries them).
// Messages are short, and never repeat the credential.
import { APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import { ModelProviderError, redirectNotFollowed } from '../../../core/models/model-port.js';

export const PROVIDER = 'anthropic';

/** The HTTP status of each error type (Anthropic's errors page); an error event inside a 200 stream carries only the type. */
const STATUS_OF_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

const MAX_CAUSE_LENGTH = 300;

/** `retry-after-ms` (milliseconds), else `retry-after` (seconds or an HTTP date), as milliseconds. */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms) {
    const value = Number.parseFloat(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = headers?.get('retry-after')?.trim();
  if (!after) return undefined;
  if (/^\d+(\.\d+)?$/.test(after)) return Math.round(Number.parseFloat(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Replaces every occurrence of the credential; short strings (a placeholder, an empty key) are not secrets. */
export function redact(text: string, secret: string | null): string {
  return secret && secret.length >= 8 ? text.split(secret).join('[redacted]') : text;
}

function shorten(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > MAX_CAUSE_LENGTH ? `${oneLine.slice(0, MAX_CAUSE_LENGTH - 1)}…` : oneLine;
}

/** `<type>: <message>` from an Anthropic error body ({type: 'error', error: {type, message}}), else the body as text. */
function bodyCause(body: unknown): { type: string | null; cause: string } {
  const detail = (body as { error?: { type?: unknown; message?: unknown } } | undefined)?.error;
  const type = typeof detail?.type === 'string' ? detail.type : null;
  const message = typeof detail?.message === 'string' ? detail.message : null;
  if (type || message) return { type, cause: [type, message].filter(Boolean).join(': ') };
  if (body === undefined || body === null) return { type: null, cause: '(no body)' };
  return { type: null, cause: typeof body === 'string' ? body : JSON.stringify(body) };
}

/** The innermost message of an error chain, e.g. `terminated (other side closed)` for a cut socket. */
function chainMessage(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    parts.push(typeof code === 'string' && !current.message.includes(code) ? `${current.message} [${code}]` : current.message);
  }
  return parts.length > 0 ? parts.join(': ') : String(error);
}

/**
 * The ModelProviderError for a failure of the SDK's request or stream. Aborts are
 * not passed here: the caller rethrows its signal's reason for those.
 */
export function toProviderError(error: unknown, secret: string | null, timeoutMs: number, phase: 'request' | 'stream'): ModelProviderError {
  const make = (message: string, status?: number, retryAfter?: number) =>
    new ModelProviderError(PROVIDER, redact(shorten(message), secret), status, retryAfter);

  if (error instanceof APIConnectionTimeoutError) return make(`request timed out after ${timeoutMs / 1000}s`);
  if (error instanceof APIConnectionError) return make(`connection failed: ${error.cause ? chainMessage(error.cause) : error.message}`);
  if (error instanceof APIError) {
    const { type, cause } = bodyCause(error.error);
    if (error.status !== undefined && error.status >= 300 && error.status < 400) {
      return make(redirectNotFollowed(error.status, error.headers), error.status);
    }
    if (error.status !== undefined) return make(`${error.status} ${cause}`, error.status, retryAfterMs(error.headers));
    // An `error` event inside the stream: the HTTP answer was 200, the type tells what happened.
    return make(`stream error: ${cause}`, type ? STATUS_OF_ERROR_TYPE[type] : undefined);
  }
  return make(`${phase === 'stream' ? 'stream broke' : 'request failed'}: ${chainMessage(error)}`);
}
