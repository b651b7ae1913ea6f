// Palai's problem vocabulary in A2A's terms, in one table; the SDK's transports
// turn each A2A error into its JSON-RPC code or HTTP status. A failure that is
// not a PalaiError is logged and answered as an internal error without its
// message, like every other surface does. A problem that means the service
// cannot answer now (the database out of reach or busy, the process not ready
// or shutting down) is ServiceUnavailableError: an internal error on the wire,
// which the router answers with HTTP 503 and Retry-After (./unavailable.ts).
import {
  A2AError,
  ContentTypeNotSupportedError,
  InvalidAgentResponseError,
  RequestMalformedError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { isPalaiError } from '../../core/errors/palai-error.js';
import type { ProblemSlug } from '../../core/errors/problem-types.js';
import type { Logger } from '../../core/logger.js';

type A2AErrorClass = new (options?: { message?: string; metadata?: Record<string, string> }) => A2AError;

/** An internal error: the transports answer -32603 / HTTP 500 for the base class. */
const Internal: A2AErrorClass = A2AError;

/** The problems that mean "not now": how long a caller should wait before sending the call again, in seconds. */
const RETRY_AFTER_SECONDS = { 'store-unavailable': 2, 'store-busy': 5, 'not-ready': 2, 'shutting-down': 1 } as const satisfies Partial<
  Record<ProblemSlug, number>
>;

/** An internal error (-32603) that says the service is unavailable: the problem is in its metadata. */
export class ServiceUnavailableError extends A2AError {
  /** How long to wait before sending the call again, in seconds. */
  get retryAfterSeconds(): number {
    return RETRY_AFTER_SECONDS[this.metadata?.palai_problem as keyof typeof RETRY_AFTER_SECONDS] ?? RETRY_AFTER_SECONDS['store-unavailable'];
  }
}
const Unavailable: A2AErrorClass = ServiceUnavailableError;

export const A2A_ERROR_FOR: Readonly<Record<ProblemSlug, A2AErrorClass>> = {
  'malformed-json': RequestMalformedError,
  'validation-failed': RequestMalformedError,
  'invalid-request': RequestMalformedError,
  // The router answers a missing or bad key with HTTP 401 before any A2A method runs.
  unauthorized: RequestMalformedError,
  forbidden: RequestMalformedError,
  'egress-denied': RequestMalformedError,
  'not-found': TaskNotFoundError,
  'agent-not-found': RequestMalformedError,
  'method-not-allowed': UnsupportedOperationError,
  'not-acceptable': ContentTypeNotSupportedError,
  conflict: UnsupportedOperationError,
  'request-timeout': RequestMalformedError,
  'payload-too-large': RequestMalformedError,
  'unsupported-media-type': ContentTypeNotSupportedError,
  'headers-too-large': RequestMalformedError,
  'idempotency-conflict': RequestMalformedError,
  'model-provider-error': InvalidAgentResponseError,
  'upstream-unavailable': Internal,
  'limit-exceeded': UnsupportedOperationError,
  'output-invalid': InvalidAgentResponseError,
  'invalid-state': UnsupportedOperationError,
  'policy-hash-mismatch': UnsupportedOperationError,
  'not-ready': Unavailable,
  'store-busy': Unavailable,
  'store-unavailable': Unavailable,
  'shutting-down': Unavailable,
  internal: Internal,
};

/** Any error thrown while serving an A2A call, as the A2A error to answer with. */
export function toA2aError(error: unknown, logger: Logger): A2AError {
  if (error instanceof A2AError) return error;
  if (isPalaiError(error)) {
    const message = error.slug === 'internal' ? 'Internal error.' : error.message;
    return new A2A_ERROR_FOR[error.slug]({ message, metadata: { palai_problem: error.slug } });
  }
  logger.error({ err: error }, 'A2A call failed');
  return new Internal({ message: 'Internal error.', metadata: { palai_problem: 'internal' } });
}
