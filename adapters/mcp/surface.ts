// The MCP surface as a module of the hub: every agent as a tool for MCP hosts
// at /mcp (loaded with the MCP SDK at the first request) and its OAuth
// protected-resource metadata; the MCP servers' tools inside agents' runs,
// through one MCP client pool per process (loaded at its first use), which the
// kernel lists servers' tools through too; and the housekeeping of stale MCP
// sessions.
import type { SurfaceModule } from '../../core/api/index.js';
import { lazyMount } from '../../core/api/index.js';
import type { McpSurfaceApi } from '../../core/surfaces/mcp/mcp-api.js';
import { lazyMcpClientPool } from './client/lazy-pool.js';
import { mcpServerTools } from './client/mcp-server-tools.js';
import { mcpServerOperations } from './operations.js';
import { protectedResourceRouter } from './protected-resource.js';

const HOUSEKEEPING_INTERVAL_MS = 10 * 60 * 1000;

export function mcpSurface(api: McpSurfaceApi): SurfaceModule {
  const clientLogger = api.logger.child({ component: 'mcp-client' });
  const clients = lazyMcpClientPool(async () => new (await import('./client/client-pool.js')).McpClientPool(api.egress, clientLogger));
  api.mcpServers.useClient(clients);
  let housekeeping: NodeJS.Timeout | null = null;
  return {
    name: 'mcp',
    http: [
      { path: '/mcp', handler: lazyMount(async () => (await import('./router.js')).mcpRouter(api)) },
      { path: '/.well-known/oauth-protected-resource', handler: protectedResourceRouter() },
    ],
    operations: mcpServerOperations(api),
    toolProviders: [mcpServerTools(api, clients)],
    loops: [
      {
        // Stale sessions are refused already; deleting them only keeps the table small.
        name: 'mcp-session-housekeeping',
        start() {
          housekeeping = setInterval(() => {
            api.mcpSessions.purgeStale().catch((error) => api.logger.warn({ err: error }, 'purging stale MCP sessions failed'));
          }, HOUSEKEEPING_INTERVAL_MS).unref();
        },
        stop() {
          if (housekeeping) clearInterval(housekeeping);
        },
      },
    ],
    close: () => clients.close(),
  };
}
