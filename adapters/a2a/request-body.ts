// Reads a request body up to the hub's own limit before the SDK's handlers see
// it (theirs stops at 100 kB), answering a body that is not JSON or too large in
// the binding's own error form: a JSON-RPC error object, or an HTTP+JSON error.
import express, { type NextFunction, type Request, type Response } from 'express';
import { RequestMalformedError, toRestErrorBody } from '@a2a-js/sdk/errors';

const JSON_TYPES = ['application/json', 'application/a2a+json'];
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

type BodyError = Error & { type?: string; status?: number };

function answerJsonRpc(error: BodyError, res: Response): void {
  if (error.type === 'entity.too.large') {
    res.status(413).json({ jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'The request body is too large.' } });
    return;
  }
  // JSON-RPC answers a parse error with HTTP 200 and code -32700.
  res.status(200).json({ jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: 'The request body is not valid JSON.' } });
}

function answerRest(error: BodyError, res: Response): void {
  const status = error.type === 'entity.too.large' ? 413 : 400;
  const message = status === 413 ? 'The request body is too large.' : 'The request body is not valid JSON.';
  res.status(status).json(toRestErrorBody(new RequestMalformedError(message), status));
}

export function readBody(limitBytes: number, binding: 'jsonrpc' | 'rest') {
  const parse = express.json({ limit: limitBytes, strict: false, type: JSON_TYPES });
  return (req: Request, res: Response, next: NextFunction): void => {
    parse(req, res, (error?: unknown) => {
      if (!error) return next();
      const bodyError = error as BodyError;
      if (bodyError.status === undefined || bodyError.status >= 500) return next(error);
      if (binding === 'jsonrpc') answerJsonRpc(bodyError, res);
      else answerRest(bodyError, res);
    });
  };
}
