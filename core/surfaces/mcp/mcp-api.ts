// The MCP wing's slice of the kernel API: the MCP servers whose tools agents
// use, the MCP sessions the MCP server surface keeps in the store, and the
// project's responses and sessions as the resources it serves. The MCP surface
// (adapters/mcp) receives it beside the KernelApi; nothing else does.
import type { KernelApi } from '../../api/kernel-api.js';
import type { McpResources } from './mcp-resources-port.js';
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
  /** The project's responses and sessions listed as MCP resources, and what completion offers (see mcp-resources-port.ts). */
  mcpResources: McpResources;
}

/** What the MCP surface is given. */
export type McpSurfaceApi = KernelApi & McpApi;
