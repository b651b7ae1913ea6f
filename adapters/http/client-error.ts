// Requests Node's HTTP parser refuses before express sees them (bad header
// bytes, conflicting framing, headers too large) still get an RFC 9457 problem,
// not Node's bodiless default answer; the connection is then closed.
import type { Socket } from 'node:net';
import { PalaiError } from '../../core/errors/palai-error.js';
import { httpStatusOf, problemBody } from './problem.js';

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

function problemFor(code: string | undefined): PalaiError {
  if (code === 'HPE_HEADER_OVERFLOW') return new PalaiError('headers-too-large', 'The request headers exceed the size this server accepts.');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new PalaiError('request-timeout', 'The request was not received in time.');
  return new PalaiError('invalid-request', 'The request is not valid HTTP/1.1 (its request line, headers or framing could not be parsed).');
}

/** A `clientError` listener for node:http servers. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A client that went away, or a response already under way, cannot be answered.
  if (error.code === 'ECONNRESET' || !socket.writable || (socket as Socket & { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const problem = problemFor(error.code);
  const status = httpStatusOf(problem.slug);
  const body = JSON.stringify(problemBody(problem));
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n` +
      'Content-Type: application/problem+json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
