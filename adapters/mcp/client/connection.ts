// One MCP session with a server, whatever carries it (Streamable HTTP, stdio):
// the SDK's Client, made the same way for both, and the one request Palai
// makes besides tools/call — listing every tool, page by page.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListToolsResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolDescription } from '../../../core/surfaces/mcp/mcp-servers-port.js';

/** Longest a connection (initialize) or a tools/list may take. */
export const HANDSHAKE_TIMEOUT_MS = 15_000;
const MAX_TOOL_PAGES = 50;
const MAX_DESCRIPTION = 8_000;

/** A server's session as the pool hands it out. */
export interface McpConnection {
  /** The connected client: connects first, or waits for a server being restarted. */
  client(signal?: AbortSignal): Promise<Client>;
  /** The server forgot `stale`'s session (HTTP 404): the next `client()` opens a new one. */
  reset(stale: Client): Promise<void>;
  /** When it was last handed out (ms since the epoch), so idle sessions can be closed. */
  lastUsed: number;
  close(): Promise<void>;
}

/**
 * A client that declares no capabilities of its own (Palai answers no sampling,
 * elicitation or roots requests) and reports tool list changes to `onToolsChanged`.
 */
export function newClient(onToolsChanged: (client: Client) => void): Client {
  const client: Client = new Client(
    { name: 'palai', version: '0.1.0' },
    {
      capabilities: {},
      // The SDK's own refresh reads one page; Palai lists every page itself.
      listChanged: { tools: { autoRefresh: false, debounceMs: 100, onChanged: () => onToolsChanged(client) } },
    },
  );
  return client;
}

const flag = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : undefined);

/** The fields of a listed tool Palai keeps. */
export function describeTool(tool: Tool): McpToolDescription {
  const a = tool.annotations;
  const annotations = a
    ? Object.fromEntries(
        Object.entries({
          title: typeof a.title === 'string' ? a.title : undefined,
          readOnlyHint: flag(a.readOnlyHint),
          destructiveHint: flag(a.destructiveHint),
          idempotentHint: flag(a.idempotentHint),
          openWorldHint: flag(a.openWorldHint),
        }).filter(([, v]) => v !== undefined),
      )
    : undefined;
  return {
    name: tool.name,
    ...(typeof tool.title === 'string' ? { title: tool.title } : {}),
    ...(typeof tool.description === 'string' ? { description: tool.description.slice(0, MAX_DESCRIPTION) } : {}),
    inputSchema: tool.inputSchema as Record<string, unknown>,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
    ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
  };
}

/** Every tool of the server (all pages); none when it offers no tools. */
export async function listAllTools(client: Client, signal?: AbortSignal): Promise<McpToolDescription[]> {
  if (!client.getServerCapabilities()?.tools) return [];
  const tools: McpToolDescription[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ListToolsResultSchema, {
      signal,
      timeout: HANDSHAKE_TIMEOUT_MS,
    });
    tools.push(...result.tools.map(describeTool));
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return tools;
}
