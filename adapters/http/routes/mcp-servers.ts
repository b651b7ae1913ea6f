// /v1/mcp_servers: the MCP servers the project's agents may use — its own
// Streamable HTTP servers and, read-only, the operator's stdio servers. Header
// values are write-only: an answer shows each header's name, whether it is set,
// and its last four characters. /tools lists the server's tools (cached; a
// server out of reach is a 502 problem).
import type { KernelApi } from '../../../core/api/index.js';
import type { OperationHandlers } from '../operations.js';

export function mcpServerHandlers({ mcpServers }: KernelApi): OperationHandlers {
  return {
    createMcpServer: async (_req, res, { projectId, body, idempotency }) => {
      res.status(201).json(await mcpServers.create(projectId, body, { idempotency }));
    },
    listMcpServers: async (_req, res, { projectId, query }) => {
      res.json(await mcpServers.list(projectId, query));
    },
    getMcpServer: async (_req, res, { projectId, params }) => {
      res.json(await mcpServers.get(projectId, params.mcp_server));
    },
    deleteMcpServer: async (_req, res, { projectId, params }) => {
      const id = await mcpServers.delete(projectId, params.mcp_server);
      res.json({ id, object: 'mcp_server.deleted', deleted: true });
    },
    listMcpServerTools: async (_req, res, { projectId, params, query }) => {
      // A caller who hangs up stops the listing too.
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      res.json(await mcpServers.tools(projectId, params.mcp_server, { refresh: query.refresh === true, signal: gone.signal }));
    },
  };
}
