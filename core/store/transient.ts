// Which database errors are an outage rather than an answer: the connection
// broke, the server is restarting or shedding load, or a transaction lost a
// serialization race. Such an error says nothing about the request or the run,
// so callers retry, hand the work to another process, or answer "try again" —
// never "failed".

/** SQLSTATE codes and classes that mean "not now", not "no". */
const TRANSIENT_SQLSTATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '57P05', // idle_session_timeout
  '53300', // too_many_connections
  '53400', // configuration_limit_exceeded
  '58000', // system_error
]);
const TRANSIENT_SQLSTATE_CLASSES = ['08']; // connection_exception

/** Errors of the socket under a database connection. */
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTCONN', 'EAI_AGAIN']);

/**
 * node-postgres reports a lost or unusable connection with plain messages, no code.
 * Matched by their fixed text, which is stable across its 8.x releases.
 */
const DRIVER_MESSAGES = [
  /^Connection terminated/, // "… unexpectedly", "… due to connection timeout"
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^Cannot use a pool after calling end on the pool$/,
];

export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the database is unavailable', { cause });
    this.name = 'StoreUnavailableError';
  }
}

export function isTransientStoreError(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  if (error instanceof AggregateError) return error.errors.some(isTransientStoreError);
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (TRANSIENT_SQLSTATES.has(code) || NETWORK_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && TRANSIENT_SQLSTATE_CLASSES.includes(code.slice(0, 2))) return true;
  }
  const message = (error as { message?: unknown }).message;
  if (typeof message === 'string' && DRIVER_MESSAGES.some((pattern) => pattern.test(message))) return true;
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== error && isTransientStoreError(cause);
}
