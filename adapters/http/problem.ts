// The HTTP mapping of the problem registry: every failure leaves as an RFC 9457
// application/problem+json body at the status this file gives its slug (core
// knows no HTTP). Unexpected errors are logged and answered with a generic 500
// — no message or stack of theirs reaches the client.
import type { OpenAIErrorMember } from '../../generated/schemas.js';
import type { Request, Response } from 'express';
import * as zlib from 'node:zlib';
import { PalaiError, isPalaiError } from '../../core/errors/palai-error.js';
import { problemTypeUri, type ProblemSlug } from '../../core/errors/problem-types.js';
import type { Logger } from '../../core/logger.js';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: { pointer: string; detail: string }[];
  [extension: string]: unknown;
}

/** Each problem's HTTP status. Typed exhaustively: a new slug without a status does not compile. */
export const HTTP_STATUS: Record<ProblemSlug, number> = {
  'malformed-json': 400,
  'validation-failed': 400,
  'invalid-request': 400,
  unauthorized: 401,
  forbidden: 403,
  'egress-denied': 403,
  'not-found': 404,
  'agent-not-found': 404,
  'method-not-allowed': 405,
  'not-acceptable': 406,
  'request-timeout': 408,
  conflict: 409,
  'invalid-state': 409,
  'policy-hash-mismatch': 409,
  'payload-too-large': 413,
  'unsupported-media-type': 415,
  'idempotency-conflict': 422,
  'limit-exceeded': 422,
  'output-invalid': 422,
  'headers-too-large': 431,
  internal: 500,
  'model-provider-error': 502,
  'upstream-unavailable': 502,
  'not-ready': 503,
  'store-busy': 503,
  'store-unavailable': 503,
  'shutting-down': 503,
};

export const httpStatusOf = (slug: ProblemSlug): number => HTTP_STATUS[slug];

/** OpenAI's error family for an HTTP status (their SDKs pick the error class by status, and show `type`). */
function openAiErrorType(status: number): OpenAIErrorMember['type'] {
  if (status >= 500) return 'server_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  return 'invalid_request_error';
}

/** A JSON Pointer in OpenAI's parameter notation: /input/0/content → input[0].content (a query's /query/x → x). */
export function openAiParam(pointer: string): string | null {
  const tokens = pointer
    .split('/')
    .slice(1)
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (tokens[0] === 'query') tokens.shift();
  if (tokens.length === 0 || tokens[0] === '') return null;
  return tokens.map((token, index) => (index === 0 ? token : /^\d+$/.test(token) ? `[${token}]` : `.${token}`)).join('');
}

/** The OpenAI-shaped `error` member every problem carries beside RFC 9457's own. */
function openAiError(error: PalaiError): OpenAIErrorMember {
  const pointer = error.errors?.[0]?.pointer;
  return {
    message: error.message,
    type: openAiErrorType(httpStatusOf(error.slug)),
    code: error.slug,
    param: pointer === undefined ? null : openAiParam(pointer),
  };
}

export function problemBody(error: PalaiError, instance?: string): ProblemBody {
  return {
    ...error.extensions,
    type: problemTypeUri(error.slug),
    title: error.title,
    status: httpStatusOf(error.slug),
    detail: error.message,
    ...(instance ? { instance } : {}),
    ...(error.errors ? { errors: error.errors } : {}),
    error: openAiError(error),
  };
}

/** What body-parser, raw-body and zlib attach to the errors they raise. */
interface BodyReadError {
  type?: string;
  limit?: number;
  encoding?: string;
  status?: number;
  code?: string;
  errno?: number;
}

/** A decompression stream's failure (zlib's codes are Z_*, brotli's ERR__*, zstd's ZSTD_error_*); body-parser marks it a 400. */
const isDecompressionError = (error: BodyReadError): boolean =>
  error.type === undefined && error.status === 400 && typeof error.errno === 'number' && /^(Z_|ERR__|ZSTD_)/.test(error.code ?? '');

/** The encodings body-parser decodes: zstd where this Node.js has it (22.15 and later). */
const DECODED = 'createZstdDecompress' in zlib ? 'gzip, deflate, br or zstd' : 'gzip, deflate or br';

/** Errors reading a request body raises: by body-parser's `type` field, else a corrupt compressed body. */
function fromBodyParser(error: BodyReadError): PalaiError | null {
  switch (error.type) {
    case 'entity.parse.failed':
      return new PalaiError('malformed-json', 'The request body is not valid JSON, or its top level is not an object or array.');
    case 'entity.too.large':
      return new PalaiError('payload-too-large', `The request body exceeds the limit of ${error.limit} bytes.`);
    case 'encoding.unsupported':
      return new PalaiError(
        'unsupported-media-type',
        `Content-Encoding ${JSON.stringify(String(error.encoding ?? '').slice(0, 64))} is not supported; send the body uncompressed, or as ${DECODED}.`,
      );
    case 'charset.unsupported':
      return new PalaiError('unsupported-media-type', 'The request body must be UTF-8 encoded JSON.');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
    case 'stream.not.readable':
      return new PalaiError('invalid-request', 'The request body could not be read.');
  }
  if (isDecompressionError(error)) {
    return new PalaiError('invalid-request', 'The request body could not be decompressed: it is not the data its Content-Encoding names.');
  }
  return null;
}

export function toPalaiError(error: unknown): PalaiError | null {
  if (isPalaiError(error)) return error;
  // The router decodes path parameters; a malformed escape such as %E0%A4 fails there, marked a 400.
  if (error instanceof URIError && (error as { status?: number }).status === 400)
    return new PalaiError('invalid-request', 'The request path is not valid percent-encoded UTF-8.');
  if (error && typeof error === 'object') return fromBodyParser(error as BodyReadError);
  return null;
}

/** How long a client should wait before trying again, by problem, in seconds. */
const RETRY_AFTER_SECONDS: Partial<Record<ProblemSlug, number>> = { 'store-unavailable': 2, 'shutting-down': 1 };

export function sendProblem(req: Request, res: Response, error: PalaiError): void {
  if (error.slug === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer realm="palai"');
  const retryAfter = RETRY_AFTER_SECONDS[error.slug];
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  const allow = error.extensions.allow;
  if (typeof allow === 'string') res.setHeader('Allow', allow);
  res
    .status(httpStatusOf(error.slug))
    .type('application/problem+json')
    .send(JSON.stringify(problemBody(error, req.originalUrl.split('?')[0])));
}

export function handleError(logger: Logger) {
  return (error: unknown, req: Request, res: Response, _next: (e?: unknown) => void): void => {
    const known = toPalaiError(error);
    if (!known) logger.error({ err: error, method: req.method, path: req.path }, 'unhandled error');
    else if (known.slug === 'store-unavailable') logger.warn({ err: error, method: req.method, path: req.path }, 'the database is unavailable');
    if (res.headersSent) {
      res.end();
      return;
    }
    sendProblem(req, res, known ?? new PalaiError('internal', 'Something went wrong on our side; the server log has the details.'));
  };
}
