// A call that finds the service unavailable (ServiceUnavailableError) is
// answered HTTP 503 with Retry-After on both bindings, its error saying so in
// the binding's terms: JSON-RPC -32603 with google.rpc details in `data` (an
// ErrorInfo naming the problem, a RetryInfo), HTTP+JSON the google.rpc status
// UNAVAILABLE with the same details (0.3's HTTP+JSON: a JSON-RPC error object).
// The SDK's transports render every error themselves, JSON-RPC at HTTP 200 and
// HTTP+JSON at 500, and cannot say "retry later"; so the request handler notes
// the outage on the request's Caller, and answerOutagesAs503 puts the 503 in
// place of the SDK's error answer on its way out.
import type { NextFunction, Request, Response } from 'express';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import { JSONRPC_PATH, REST_PATH } from './agent-card.js';
import type { Caller } from './caller.js';
import type { ServiceUnavailableError } from './errors.js';

/** How an A2A error is written: a JSON-RPC response, a google.rpc Status (HTTP+JSON 1.0), a JSON-RPC error object (HTTP+JSON 0.3). */
type ErrorShape = 'jsonrpc' | 'rest' | 'rest-0.3';

/** The shape of an error answered at `path`, a path below /a2a/{agent} (a card is answered as HTTP+JSON). */
function shapeAt(path: string): ErrorShape {
  if (path.startsWith(JSONRPC_PATH)) return 'jsonrpc';
  return path.startsWith(`${REST_PATH}/v1/`) ? 'rest-0.3' : 'rest';
}

function unavailableBody(shape: ErrorShape, outage: ServiceUnavailableError, jsonRpcId: unknown): object {
  const details = [outage.toErrorInfo(), { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${outage.retryAfterSeconds}s` }];
  const error = { code: A2A_ERROR_CODE.INTERNAL_ERROR, message: outage.message, data: details };
  switch (shape) {
    case 'jsonrpc':
      return { jsonrpc: '2.0', id: jsonRpcId ?? null, error };
    case 'rest':
      return { error: { code: 503, status: 'UNAVAILABLE', message: outage.message, details } };
    case 'rest-0.3':
      return error;
  }
}

function send503(res: Response, shape: ErrorShape, outage: ServiceUnavailableError, jsonRpcId: unknown, json: (body: unknown) => Response): void {
  res.status(503).setHeader('Retry-After', String(outage.retryAfterSeconds));
  json(unavailableBody(shape, outage, jsonRpcId));
}

/** Answers an outage met before any A2A method ran (the key or the agent could not be looked up). */
export function answerUnavailable(req: Request, res: Response, outage: ServiceUnavailableError): void {
  send503(res, shapeAt(req.path), outage, null, (body) => res.json(body));
}

/** The headers the SDK sets for an event stream, taken back when a stream's first write is an outage's 503. */
const STREAM_HEADERS = ['Content-Type', 'Cache-Control', 'Connection', 'X-Accel-Buffering'];

/**
 * For the routes below /a2a/{agent}: when the call failed on an outage, the
 * SDK's error answer leaves as the 503. A stream's headers leave with its first
 * write (0.3's tasks/resubscribe flushes them before the call runs), so a call
 * that fails before its stream starts is a 503 too; one that fails later ends
 * its stream with the SDK's error event.
 */
export function answerOutagesAs503(req: Request, res: Response, next: NextFunction): void {
  const outage = (): ServiceUnavailableError | null => (res.locals.caller as Caller | undefined)?.unavailable ?? null;
  const shape = shapeAt(req.path);
  const json = res.json.bind(res);
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  res.json = (body: unknown) => {
    const met = outage();
    if (met === null || res.headersSent) return json(body);
    send503(res, shape, met, (body as { id?: unknown } | null)?.id, json);
    return res;
  };
  res.flushHeaders = () => undefined;
  res.write = ((...args: unknown[]) => {
    const met = outage();
    if (met === null || res.headersSent) return write(...args);
    for (const name of STREAM_HEADERS) res.removeHeader(name);
    send503(res, shape, met, (req.body as { id?: unknown } | undefined)?.id, json);
    return true;
  }) as Response['write'];
  next();
}
