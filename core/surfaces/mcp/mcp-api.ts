// The MCP wing's slice of the kernel API: the MCP servers whose tools agents
// use, and the MCP sessions the MCP server surface keeps in the store. The MCP
// surface (adapters/mcp) receives it beside the KernelApi; nothing else does.
import type { KernelApi } from '../../api/kernel-api.js';
import type { McpServers } from './mcp-servers-port.js';
import type { McpSessions } from './mcp-sessions-port.js';

export interface McpApi {
  /**
   * MCP servers whose tools the project's agents use (`{type: "mcp", server_label}`): its own
   * Streamable HTTP servers and the operator's stdio servers (see mcp-servers-port.ts).
   */
  mcpServers: McpServers;
  /** MCP sessions, held by the store so any process serves any session (see mcp-sessions-port.ts). */
  mcpSessions: McpSessions;
}

/** What the MCP surface is given. */
export type McpSurfaceApi = KernelApi & McpApi;
