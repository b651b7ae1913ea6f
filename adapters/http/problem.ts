// The HTTP mapping of the problem registry: every failure leaves as an RFC 9457
// application/problem+json body. Unexpected errors are logged and answered with
// a generic 500 — no message or stack of theirs reaches the client.
import type { Request, Response } from 'express';
import { PalaiError, isPalaiError } from '../../core/errors/palai-error.js';
import { problemTypeUri } from '../../core/errors/problem-types.js';
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

export function problemBody(error: PalaiError, instance?: string): ProblemBody {
  return {
    ...error.extensions,
    type: problemTypeUri(error.slug),
    title: error.title,
    status: error.status,
    detail: error.message,
    ...(instance ? { instance } : {}),
    ...(error.errors ? { errors: error.errors } : {}),
  };
}

/** Errors body-parser raises, by its `type` field. */
function fromBodyParser(error: { type?: string; limit?: number }): PalaiError | null {
  switch (error.type) {
    case 'entity.parse.failed':
      return new PalaiError('malformed-json', 'The request body is not valid JSON, or its top level is not an object or array.');
    case 'entity.too.large':
      return new PalaiError('payload-too-large', `The request body exceeds the limit of ${error.limit} bytes.`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new PalaiError('unsupported-media-type', 'The request body must be UTF-8 encoded JSON.');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new PalaiError('invalid-request', 'The request body could not be read.');
    default:
      return null;
  }
}

export function toPalaiError(error: unknown): PalaiError | null {
  if (isPalaiError(error)) return error;
  if (error && typeof error === 'object' && 'type' in error) return fromBodyParser(error as { type?: string });
  return null;
}

export function sendProblem(req: Request, res: Response, error: PalaiError): void {
  if (error.slug === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer realm="palai"');
  const allow = error.extensions.allow;
  if (typeof allow === 'string') res.setHeader('Allow', allow);
  res.status(error.status).type('application/problem+json').send(JSON.stringify(problemBody(error, req.originalUrl.split('?')[0])));
}

export function handleError(logger: Logger) {
  return (error: unknown, req: Request, res: Response, _next: (e?: unknown) => void): void => {
    const known = toPalaiError(error);
    if (!known) logger.error({ err: error, method: req.method, path: req.path }, 'unhandled error');
    if (res.headersSent) {
      res.end();
      return;
    }
    sendProblem(req, res, known ?? new PalaiError('internal', 'Something went wrong on our side; the server log has the details.'));
  };
}
