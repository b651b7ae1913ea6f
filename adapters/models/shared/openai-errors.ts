// Turns what the OpenAI SDK throws into the port's ModelProviderError: the HTTP
// status and `retry-after` kept for the kernel's retry decision, the provider's
// own words kept short, and any secret scrubbed, since error bodies echo keys.
import { STATUS_CODES } from 'node:http';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { ModelProviderError, redirectNotFollowed } from '../../../core/models/model-port.js';

const MAX_CAUSE_LENGTH = 300;

/** Removes the API key, bearer tokens and key-shaped strings (OpenAI's 401 echoes a masked key). */
export function redactSecrets(text: string, apiKey: string | null): string {
  let out = apiKey && apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text;
  out = out.replace(/\bBearer\s+\S+/gi, 'Bearer [redacted]');
  out = out.replace(/\b(?:sk|rk)-[A-Za-z0-9_*-]{6,}/g, '[redacted]');
  return out;
}

/** A provider's words fit for an error message: secrets removed, on one line, kept short. */
export function cleanCause(text: string, apiKey: string | null): string {
  const flat = redactSecrets(text, apiKey).replace(/\s+/g, ' ').trim();
  return flat.length > MAX_CAUSE_LENGTH ? `${flat.slice(0, MAX_CAUSE_LENGTH - 1)}…` : flat;
}

/** Milliseconds from `retry-after-ms`, else `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  const millis = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(millis) && millis >= 0) return Math.round(millis);
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number.parseFloat(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The provider's own explanation from an error body, without the SDK's status prefix. */
function causeOf(error: APIError): string {
  const body = error.error as { message?: unknown; code?: unknown; type?: unknown } | undefined;
  if (typeof body?.message === 'string' && body.message !== '') return body.message;
  if (typeof body?.code === 'string') return body.code;
  if (typeof body?.type === 'string') return body.type;
  const message = error.status !== undefined ? error.message.replace(new RegExp(`^${error.status}\\s*`), '') : error.message;
  // An empty body, or a proxy's HTML page: the status's own name says as much.
  if (message === '' || message === 'status code (no body)' || /^\s*<(!doctype|html)/i.test(message)) return STATUS_CODES[error.status ?? 0] ?? 'no body';
  return message;
}

/** The innermost error's words and code: "other side closed (UND_ERR_SOCKET)", "connect ECONNREFUSED 127.0.0.1:443". */
function networkCause(error: unknown): string {
  let innermost: Error | undefined;
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) innermost = current;
  if (!innermost) return 'unknown error';
  const code = (innermost as { code?: unknown }).code;
  const message = innermost.message || 'unknown error';
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}

/** Maps anything the SDK threw while calling or streaming (aborts are handled by the caller). */
export function toProviderError(provider: string, error: unknown, apiKey: string | null): ModelProviderError {
  const clean = (text: string) => cleanCause(text, apiKey);
  if (error instanceof ModelProviderError) return error;
  if (error instanceof APIConnectionTimeoutError) return new ModelProviderError(provider, 'the request timed out');
  if (error instanceof APIConnectionError) return new ModelProviderError(provider, clean(`connection failed: ${networkCause(error.cause)}`));
  if (error instanceof APIError) {
    // An `error` event mid-stream (openai 7 throws it as an APIError without a status): its code (OpenAI's are
    // words such as rate_limit_exceeded; vLLM's a bare HTTP status, left out) leads, as the event's did.
    if (error.status === undefined) {
      const code = typeof error.code === 'string' && !/^\d+$/.test(error.code) ? `${error.code}: ` : '';
      return new ModelProviderError(provider, clean(`stream error: ${code}${causeOf(error)}`));
    }
    if (error.status >= 300 && error.status < 400)
      return new ModelProviderError(provider, clean(redirectNotFollowed(error.status, error.headers)), error.status);
    return new ModelProviderError(provider, clean(`${error.status} ${causeOf(error)}`), error.status, retryAfterMs(error.headers));
  }
  if (error instanceof SyntaxError) return new ModelProviderError(provider, clean(`malformed stream: ${error.message}`));
  return new ModelProviderError(provider, clean(`the stream broke: ${networkCause(error)}`));
}
