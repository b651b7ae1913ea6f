// /v1/mcp_servers: the MCP servers the project's agents may use — its own
// Streamable HTTP servers and, read-only, the operator's stdio servers. Header
// values are write-only: an answer shows each header's name, whether it is set,
// and its last four characters. /tools lists the server's tools (cached; a
// server out of reach is a 502 problem).
import type { SurfaceOperations } from '../../core/api/surface.js';
import type { McpApi } from '../../core/surfaces/mcp/mcp-api.js';

export function mcpServerOperations({ mcpServers }: McpApi): SurfaceOperations {
  return {
    createMcpServer: async ({ projectId, body, idempotency }) => ({ status: 201, body: await mcpServers.create(projectId, body, { idempotency }) }),
    listMcpServers: async ({ projectId, query }) => ({ body: await mcpServers.list(projectId, query) }),
    getMcpServer: async ({ projectId, params }) => ({ body: await mcpServers.get(projectId, params.mcp_server) }),
    deleteMcpServer: async ({ projectId, params }) => {
      const id = await mcpServers.delete(projectId, params.mcp_server);
      return { body: { id, object: 'mcp_server.deleted', deleted: true } };
    },
    // A caller who hangs up stops the listing too.
    listMcpServerTools: async ({ projectId, params, query, signal }) => ({
      body: await mcpServers.tools(projectId, params.mcp_server, { refresh: query.refresh === true, signal }),
    }),
  };
}
