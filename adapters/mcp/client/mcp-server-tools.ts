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
import type { KernelApi } from '../../../core/api/index.js';
import { isPalaiError } from '../../../core/errors/palai-error.js';
import { MODEL_TOOL_NAME, modelToolName, type McpServerConnection, type McpServerTarget, type McpToolDescription } from '../../../core/mcp-servers/mcp-servers-port.js';
import { ToolError, ToolResolutionError, type ResolvedTool, type ToolCallContext, type ToolOutcome, type ToolProvider, type ToolRisk } from '../../../core/tools/tool-port.js';
import type { McpToolSpec } from '../../../generated/schemas.js';
import { callOutcome } from './call-outcome.js';
import type { McpClientPool } from './client-pool.js';
import { describeFailure, isConnectionLost, isTimeout, isUnknownTool } from './failures.js';
import { isSent, ProgressCheckpoints, type SentCheckpoint } from './progress-checkpoints.js';
import { prepareSchema } from './tool-schemas.js';

/** Longest a server may stay silent on a call (no result, no progress) before the call is cancelled. */
export const CALL_IDLE_TIMEOUT_MS = 120_000;
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

/** A call that ran before may run again only when running it twice does no harm. */
const mayRepeat = (tool: McpToolDescription): boolean => tool.annotations?.idempotentHint === true || tool.annotations?.readOnlyHint === true;

const interrupted = (server: string, tool: string, when: string): ToolError =>
  new ToolError(
    `The call to ${tool} on the MCP server ${server} was interrupted (${when}) and was not retried: the tool is not marked idempotent or read-only, ` +
      'so it may already have taken effect. Check before calling it again.',
  );

class McpCall {
  constructor(
    private readonly pool: McpClientPool,
    private readonly target: McpServerTarget,
    private readonly tool: McpToolDescription,
    private readonly context: ToolCallContext,
    private readonly onUnknownTool: () => void,
  ) {}

  async run(args: Record<string, unknown>): Promise<ToolOutcome> {
    const { context, tool, target } = this;
    if (isSent(context.checkpoint) && !mayRepeat(tool)) throw interrupted(target.name, tool.name, 'Palai stopped while the server ran it');
    const base: SentCheckpoint = { sent: true, attempt: context.attempt };
    await context.saveCheckpoint(base);
    const progress = new ProgressCheckpoints(context, base);
    try {
      try {
        return await this.send(args, progress);
      } catch (error) {
        // A stdio server that died mid-call was restarted: a call that may repeat goes once more.
        if (!isConnectionLost(error) || !mayRepeat(tool)) throw error;
        context.signal.throwIfAborted();
        return await this.send(args, progress);
      }
    } catch (error) {
      context.signal.throwIfAborted();
      if (isConnectionLost(error)) throw mayRepeat(tool) ? this.failure(error) : interrupted(target.name, tool.name, 'the connection to the server closed while it ran');
      if (isUnknownTool(error)) this.onUnknownTool();
      throw this.failure(error);
    } finally {
      await progress.settle();
    }
  }

  private async send(args: Record<string, unknown>, progress: ProgressCheckpoints): Promise<ToolOutcome> {
    const result = await this.pool.callTool(this.target, this.tool.name, args, {
      meta: { 'palai/idempotency_key': this.context.idempotencyKey },
      signal: this.context.signal,
      idleTimeoutMs: CALL_IDLE_TIMEOUT_MS,
      onprogress: (p) => progress.record(p),
    });
    return callOutcome(result, this.tool.name, this.tool.outputSchema ? prepareSchema(this.tool.outputSchema) : null);
  }

  private failure(error: unknown): ToolError {
    if (error instanceof ToolError) return error;
    if (isTimeout(error)) return new ToolError(`The MCP server ${this.target.name} did not answer the call to ${this.tool.name} within ${CALL_IDLE_TIMEOUT_MS / 1000} s; it was cancelled.`);
    return new ToolError(`The call to ${this.tool.name} on the MCP server ${this.target.name} failed: ${describeFailure(error)}.`);
  }
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
export function mcpServerTools(api: KernelApi, pool: McpClientPool): ToolProvider<McpToolSpec> {
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
          risk: riskOf(tool),
          ...(approval ? { approval } : {}),
          validateArguments: input.validate !== null,
          run: (args: Record<string, unknown> | undefined, context) => new McpCall(pool, target, tool, context, refresh).run(args ?? {}),
        };
      });
    },
  };
}
