// The transport's own refusals, before any MCP method runs: an HTTP status and
// a JSON-RPC error object with no id, as the Streamable HTTP transport answers.
import type { Response } from 'express';

/** Codes the Streamable HTTP transport uses outside JSON-RPC's own. */
export const TRANSPORT_ERROR = -32000;
export const SESSION_NOT_FOUND = -32001;
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

export function refuse(res: Response, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(status).json({ jsonrpc: '2.0', id: null, error: { code, message } });
}

/** Where a host finds how to authenticate to /mcp (RFC 9728), as the caller reached Palai. */
export const resourceMetadataUrl = (origin: string): string => `${origin}/.well-known/oauth-protected-resource/mcp`;
