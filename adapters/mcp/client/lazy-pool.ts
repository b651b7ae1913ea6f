// The MCP client pool, loaded with the MCP SDK at its first use (the kernel
// listing a server's tools, a run calling one), not when the process starts: a
// hub whose agents use no MCP server never loads the SDK's client. Listeners of
// tool changes given before then are handed to the pool when it is made (no
// server can have said anything before a session to it was opened).
import { lazyOnce } from '../../../core/api/index.js';
import type { McpServerClient, McpServerTarget, McpToolDescription } from '../../../core/surfaces/mcp/mcp-servers-port.js';
import type { CallOptions, McpClientPool } from './client-pool.js';

type ToolsListener = (target: McpServerTarget, tools: McpToolDescription[]) => void;

export interface LazyMcpClientPool extends McpServerClient, Pick<McpClientPool, 'callTool' | 'close'> {}

export function lazyMcpClientPool(load: () => Promise<McpClientPool>): LazyMcpClientPool {
  let made: McpClientPool | null = null;
  const listeners: ToolsListener[] = [];
  const loaded = lazyOnce(async () => {
    const pool = await load();
    for (const listener of listeners) pool.onToolsChanged(listener);
    return (made = pool);
  });
  return {
    onToolsChanged(listener) {
      if (made) made.onToolsChanged(listener);
      else listeners.push(listener);
    },
    async listTools(target, signal) {
      return (await loaded()).listTools(target, signal);
    },
    async callTool(target, name, args, options: CallOptions) {
      return (await loaded()).callTool(target, name, args, options);
    },
    async close() {
      await (await loaded.ifLoaded())?.close();
    },
  };
}
