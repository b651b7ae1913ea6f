// Binds the MCP wing's slice to one kernel. The operator's stdio servers are
// read here, once, from the file PALAI_MCP_STDIO_SERVERS_FILE names: a wrong
// file stops the start with one line naming the setting.
import { ConfigError, type PalaiConfig } from '../../config.js';
import { atBoundary } from '../../api/boundary.js';
import type { Kernel } from '../../kernel.js';
import { declareInboxSource } from '../../idempotency/inbox-sources.js';
import type { McpApi } from './mcp-api.js';
import type { StdioServerDeclaration } from './mcp-servers-port.js';
import { createMcpResources } from './mcp-resources.js';
import { createMcpServers } from './mcp-servers.js';
import { createMcpSessions } from './mcp-sessions.js';
import { readStdioDeclarations } from './stdio-declarations.js';

/** MCP tool calls in the inbox, keyed by their request. */
export const MCP_INBOX_SOURCE = declareInboxSource('mcp', 'request id');

/** The operator's stdio servers the configuration names; a file that cannot be read or is wrong is a ConfigError. */
export function stdioServersOf(config: Pick<PalaiConfig, 'mcpStdioServersFile'>): StdioServerDeclaration[] {
  try {
    return readStdioDeclarations(config.mcpStdioServersFile);
  } catch (error) {
    throw new ConfigError(`PALAI_MCP_STDIO_SERVERS_FILE: ${(error as Error).message}`);
  }
}

export function createMcpApi({ db, secrets, config, logger }: Kernel): McpApi {
  return atBoundary({
    mcpServers: createMcpServers({ db, secrets, stdioServers: stdioServersOf(config), logger: logger.child({ component: 'mcp-servers' }) }),
    mcpSessions: createMcpSessions(db),
    mcpResources: createMcpResources(db),
  });
}
