// The tools of MCP servers as durable tools, for `{type: "mcp", server_label}`
// entries (OpenAI's `mcp` tool shape): each tool of the server (or of
// `allowed_tools`) is a function `mcp__<server>__<tool>` with the tool's input
// schema, which the broker checks arguments against before a call.
//
//   risk       read for a tool annotated readOnlyHint, privileged for one
//              annotated destructiveHint, write otherwise
//   approval   require_approval "always" (or the tool listed in {tools}) asks a
//              human for every call; "never" for none; absent, the agent's policy
//   a call     commits {sent: true} on its checkpoint, then sends tools/call with
//              Palai's idempotency key in _meta["palai/idempotency_key"], a
//              progress token (progress is committed on the checkpoint and keeps
//              the call alive), and notifications/cancelled when the run stops
//   a crash    the run that takes over finds {sent: true}: it sends the call again
//              only for a tool annotated idempotentHint or readOnlyHint; any other
//              gets the tool error "interrupted, not retried" — the server may have
//              run it, and only the model (or a person) can decide what now
import type { McpSurfaceApi } from '../../../core/surfaces/mcp/mcp-api.js';
import { isPalaiError } from '../../../core/errors/palai-error.js';
import { modelToolName, type McpServerConnection, type McpToolDescription } from '../../../core/surfaces/mcp/mcp-servers-port.js';
import { MODEL_TOOL_NAME, ToolResolutionError, type ResolvedTool, type ToolProvider, type ToolRisk } from '../../../core/tools/tool-port.js';
import type { McpToolSpec } from '../../../generated/schemas.js';
import type { McpClientPool } from './client-pool.js';
import { prepareSchema } from './tool-schemas.js';

const SERVER_LABEL = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

function riskOf(tool: McpToolDescription): ToolRisk {
  if (tool.annotations?.readOnlyHint === true) return 'read';
  if (tool.annotations?.destructiveHint === true) return 'privileged';
  return 'write';
}

function approvalOf(rule: McpToolSpec['require_approval'], tool: string): 'always' | 'never' | undefined {
  if (rule === 'always' || rule === 'never') return rule;
  if (rule && rule.tools.includes(tool)) return 'always';
  return undefined;
}

/** The model-facing names of the tools, refusing two tools that would look the same to the model. */
function namedTools(server: string, tools: McpToolDescription[]): Array<[string, McpToolDescription]> {
  const byName = new Map<string, McpToolDescription>();
  for (const tool of tools) {
    const name = modelToolName(server, tool.name);
    const other = byName.get(name);
    if (other) {
      throw new ToolResolutionError(
        `The MCP server ${JSON.stringify(server)} has tools ${JSON.stringify(other.name)} and ${JSON.stringify(tool.name)}, which are both ${name} to the model; ` +
          'list only one of them in allowed_tools.',
      );
    }
    byName.set(name, tool);
  }
  return [...byName];
}

/** The provider of `mcp` tool entries: it reads servers and their tools through the kernel API and calls them through the pool. */
export function mcpServerTools(api: McpSurfaceApi, pool: Pick<McpClientPool, 'callTool'>): ToolProvider<McpToolSpec> {
  return {
    kind: 'mcp',

    validateSpec(spec) {
      return SERVER_LABEL.test(spec.server_label) ? null : 'server_label must name an MCP server (1 to 32 letters, digits, _ and -)';
    },

    async resolve(spec, resolveContext): Promise<ResolvedTool[]> {
      const { projectId } = resolveContext;
      let connection: McpServerConnection;
      try {
        connection = await api.mcpServers.connection(projectId, spec.server_label, { signal: resolveContext.signal });
      } catch (error) {
        if (isPalaiError(error)) throw new ToolResolutionError(`The MCP server ${JSON.stringify(spec.server_label)} cannot be used: ${error.message}`);
        throw error;
      }
      const { target } = connection;
      const allowed = spec.allowed_tools ? new Set(spec.allowed_tools) : null;
      const tools = connection.tools.filter((tool) => allowed === null || allowed.has(tool.name));
      // The cached list is stale: list again, for the next run.
      const refresh = () => void api.mcpServers.tools(projectId, target.name, { refresh: true }).catch(() => undefined);
      return namedTools(target.name, tools).map(([name, tool]): ResolvedTool => {
        if (!MODEL_TOOL_NAME.test(name)) throw new ToolResolutionError(`The MCP tool ${JSON.stringify(tool.name)} cannot be named for the model.`);
        const input = prepareSchema(tool.inputSchema);
        const approval = approvalOf(spec.require_approval, tool.name);
        return {
          name,
          kind: 'mcp',
          description: tool.description ?? tool.title ?? `The tool ${tool.name} of the MCP server ${target.name}.`,
          parameters: input.schema,
          argumentSchema: input.raw,
          risk: riskOf(tool),
          ...(approval ? { approval } : {}),
          validateArguments: input.validate !== null,
          target: () => ({ type: 'mcp', locator: `${target.name}/${tool.name}` }),
          // The call (with the MCP SDK's errors it tells apart) is loaded with the first call.
          run: async (args: Record<string, unknown> | undefined, context) =>
            new (await import('./mcp-call.js')).McpCall(pool, target, tool, context, refresh).run(args ?? {}),
        };
      });
    },
  };
}
