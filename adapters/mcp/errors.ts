// Palai's problem vocabulary in MCP's terms, in one table. A problem the caller
// can fix is an invalid-params error (-32602) — or, inside tools/call, a tool
// result with `isError: true` naming the problem, so the model that called the
// tool can read it and correct itself. A problem on Palai's side is an internal
// error (-32603), logged, and never carries an unexpected error's message.
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import type { ProblemSlug } from '../../core/errors/problem-types.js';
import type { Logger } from '../../core/logger.js';

const CALLER = ErrorCode.InvalidParams;
const SERVER = ErrorCode.InternalError;

export const JSONRPC_CODE_FOR: Readonly<Record<ProblemSlug, number>> = {
  'malformed-json': ErrorCode.ParseError,
  'validation-failed': CALLER,
  'invalid-request': CALLER,
  // The router answers a missing or bad key with HTTP 401 before any method runs.
  unauthorized: CALLER,
  forbidden: CALLER,
  'egress-denied': CALLER,
  'not-found': CALLER,
  'agent-not-found': CALLER,
  'method-not-allowed': CALLER,
  'not-acceptable': CALLER,
  conflict: CALLER,
  'request-timeout': CALLER,
  'payload-too-large': CALLER,
  'unsupported-media-type': CALLER,
  'headers-too-large': CALLER,
  'idempotency-conflict': CALLER,
  'model-provider-error': SERVER,
  'upstream-unavailable': SERVER,
  'limit-exceeded': CALLER,
  'output-invalid': SERVER,
  'invalid-state': CALLER,
  'policy-hash-mismatch': CALLER,
  'not-ready': SERVER,
  'store-busy': SERVER,
  'store-unavailable': SERVER,
  'shutting-down': SERVER,
  internal: SERVER,
};

/** What the SDK's McpError puts before its message; the client's McpError puts it there again. */
const SDK_PREFIX = /^MCP error -?\d+: /;

/** An McpError whose message is what the wire carries: without the SDK's prefix, which the receiving client adds. */
export function wireError(code: number, message: string, data?: unknown): McpError {
  const bare = message.replace(SDK_PREFIX, '');
  const error = new McpError(code, bare, data);
  error.message = bare;
  return error;
}

/** Any failure while serving an MCP request, as the JSON-RPC error to answer with. */
export function toMcpError(error: unknown, logger: Logger): McpError {
  if (error instanceof McpError) return wireError(error.code, error.message, error.data);
  if (isPalaiError(error)) {
    const message = error.slug === 'internal' ? 'Internal error.' : error.message;
    return wireError(JSONRPC_CODE_FOR[error.slug], message, { palai_problem: error.slug });
  }
  logger.error({ err: error }, 'MCP request failed');
  return wireError(SERVER, 'Internal error.', { palai_problem: 'internal' });
}

/** A tool result that tells the caller what was wrong with its call. */
export const toolError = (text: string, meta?: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text }],
  isError: true,
  ...(meta ? { _meta: meta } : {}),
});

/**
 * Inside tools/call: a problem the caller can fix becomes an isError result;
 * anything else stays a JSON-RPC error — Palai's own failures, and a request
 * that is malformed as a request (its arguments hold text no store can keep),
 * which is invalid params of the call itself, not something the model said.
 */
export function callFailure(error: unknown, logger: Logger): CallToolResult {
  const mcp = toMcpError(error, logger);
  if (mcp.code !== CALLER || (isPalaiError(error) && error.slug === 'validation-failed')) throw mcp;
  return toolError(mcp.message, { 'palai/problem': (mcp.data as { palai_problem?: string } | undefined)?.palai_problem });
}
