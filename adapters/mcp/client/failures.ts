// What went wrong talking to an MCP server, said without anything secret: the
// server's own words (a JSON-RPC error, an HTTP status), or the network's
// ("connection refused"), never a header, an environment value or a stack.
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { egressRefusalIn } from '../../../core/egress/egress-port.js';
import { PalaiError } from '../../../core/errors/palai-error.js';

const MAX_DETAIL = 300;

const clip = (text: string): string => (text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text);

/**
 * The session the request named is gone on the server: HTTP 404, as the spec
 * says, or a 400 that says so, as some servers (server-everything among them)
 * answer after a restart. Either way the request was not processed: open a new
 * session and send it again.
 */
export const isSessionGone = (error: unknown): boolean =>
  error instanceof StreamableHTTPError && (error.code === 404 || (error.code === 400 && /session/i.test(error.message)));

/** The connection closed while the request was out (a stdio server that died): whether it ran is unknown. */
export const isConnectionLost = (error: unknown): boolean => error instanceof McpError && error.code === ErrorCode.ConnectionClosed;

export const isTimeout = (error: unknown): boolean => error instanceof McpError && error.code === ErrorCode.RequestTimeout;

/** The server does not know the tool: its list changed since Palai read it. */
export const isUnknownTool = (error: unknown): boolean =>
  error instanceof McpError &&
  (error.code === ErrorCode.InvalidParams || error.code === ErrorCode.MethodNotFound) &&
  /unknown tool|not found/i.test(error.message);

function networkCode(error: unknown): string | null {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  }
  return null;
}

/** A few words on the failure, for a tool error or a problem's detail. */
export function describeFailure(error: unknown): string {
  const refusal = egressRefusalIn(error);
  if (refusal) return refusal.message;
  if (error instanceof StreamableHTTPError) {
    const said = error.message.replace(/^Streamable HTTP error: /, '');
    return error.code !== undefined && error.code > 0 ? `it answered HTTP ${error.code}: ${clip(said)}` : clip(said);
  }
  if (isTimeout(error)) return 'it did not answer in time';
  if (isConnectionLost(error)) return 'the connection to it closed';
  if (error instanceof McpError) return clip(error.message);
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'it did not answer in time';
  const code = networkCode(error);
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code) return `the connection failed (${code})`;
  if (error instanceof PalaiError) return error.message;
  return error instanceof Error ? clip(error.message) : 'it failed';
}

/** The problem a failure to reach a server is: the egress guard's own refusal, or `upstream-unavailable`. */
export function unreachable(server: string, error: unknown): PalaiError {
  return (
    egressRefusalIn(error) ??
    new PalaiError('upstream-unavailable', `The MCP server ${JSON.stringify(server)} could not be reached: ${describeFailure(error)}.`)
  );
}
