// One call of an MCP server's tool (the provider is mcp-server-tools.ts, which
// loads this with the first call): its checkpoints, its retry after a crash or a
// lost connection, and its failures as tool errors.
import type { McpServerTarget, McpToolDescription } from '../../../core/surfaces/mcp/mcp-servers-port.js';
import { ToolError, type ToolCallContext, type ToolOutcome } from '../../../core/tools/tool-port.js';
import { callOutcome } from './call-outcome.js';
import type { McpClientPool } from './client-pool.js';
import { describeFailure, isConnectionLost, isTimeout, isUnknownTool } from './failures.js';
import { isSent, ProgressCheckpoints, type SentCheckpoint } from './progress-checkpoints.js';
import { prepareSchema } from './tool-schemas.js';

/** Longest a server may stay silent on a call (no result, no progress) before the call is cancelled. */
export const CALL_IDLE_TIMEOUT_MS = 120_000;

/** A call that ran before may run again only when running it twice does no harm. */
const mayRepeat = (tool: McpToolDescription): boolean => tool.annotations?.idempotentHint === true || tool.annotations?.readOnlyHint === true;

const interrupted = (server: string, tool: string, when: string): ToolError =>
  new ToolError(
    `The call to ${tool} on the MCP server ${server} was interrupted (${when}) and was not retried: the tool is not marked idempotent or read-only, ` +
      'so it may already have taken effect. Check before calling it again.',
    { uncertain: true },
  );

export class McpCall {
  constructor(
    private readonly pool: Pick<McpClientPool, 'callTool'>,
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
      if (isConnectionLost(error))
        throw mayRepeat(tool) ? this.failure(error) : interrupted(target.name, tool.name, 'the connection to the server closed while it ran');
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
    if (isTimeout(error))
      return new ToolError(
        `The MCP server ${this.target.name} did not answer the call to ${this.tool.name} within ${CALL_IDLE_TIMEOUT_MS / 1000} s; it was cancelled.`,
      );
    return new ToolError(`The call to ${this.tool.name} on the MCP server ${this.target.name} failed: ${describeFailure(error)}.`);
  }
}
