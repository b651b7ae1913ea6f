// Tool names the model sees that more than one part of the hub must agree on:
// the MCP client names a server's tools so, and an objective's policy lists
// MCP tools as `server/tool` that its wakes must then be offered by that name.
import { createHash } from 'node:crypto';

const MAX_NAME = 64;

/**
 * The function the model sees for a server's tool: `mcp__<server>__<tool>`,
 * every other character made `_`; a name longer than 64 keeps its start and
 * ends in a hash of the whole, so two long names stay apart.
 */
export function mcpToolName(server: string, tool: string): string {
  const plain = `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_');
  if (plain.length <= MAX_NAME) return plain;
  const hash = createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8);
  return `${plain.slice(0, MAX_NAME - hash.length - 1)}_${hash}`;
}
