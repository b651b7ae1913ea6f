// Palai's MCP client: one session per server per process, shared by every run
// that calls the server, opened on first use. A registered server's session
// unused for IDLE_MS is closed; an operator's stdio server keeps running (and
// is restarted when it dies) until Palai stops. The kernel lists tools through
// it (McpServerClient); the tool provider calls tools through it.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import type { EgressFetch } from '../../../core/egress/egress-port.js';
import type { Logger } from '../../../core/logger.js';
import type { McpServerClient, McpServerTarget, McpToolDescription } from '../../../core/surfaces/mcp/mcp-servers-port.js';
import { listAllTools, type McpConnection } from './connection.js';
import { describeFailure, isSessionGone, unreachable } from './failures.js';
import { HttpConnection } from './http-connection.js';
import { StdioConnection } from './stdio-connection.js';

const IDLE_MS = 10 * 60 * 1000;
const SWEEP_MS = 60 * 1000;

export interface CallOptions {
  /** Sent as the request's `_meta` (Palai's idempotency key). */
  meta: Record<string, unknown>;
  signal: AbortSignal;
  /** Longest the server may stay silent; each progress notification starts the wait again. */
  idleTimeoutMs: number;
  onprogress?: (progress: Progress) => void;
}

type ToolsListener = (target: McpServerTarget, tools: McpToolDescription[]) => void;

export class McpClientPool implements McpServerClient {
  private readonly connections = new Map<string, McpConnection>();
  /** Requests out per connection: a session in use is never closed as idle, however long its call. */
  private readonly inFlight = new Map<string, number>();
  private readonly listeners: ToolsListener[] = [];
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly egress: EgressFetch,
    private readonly logger: Logger,
  ) {
    this.sweeper = setInterval(() => this.closeIdle(), SWEEP_MS);
    this.sweeper.unref();
  }

  onToolsChanged(listener: ToolsListener): void {
    this.listeners.push(listener);
  }

  /** The server's tools, listed now. Rejects with `egress-denied` or `upstream-unavailable`. */
  async listTools(target: McpServerTarget, signal?: AbortSignal): Promise<McpToolDescription[]> {
    try {
      return await this.withSession(target, signal, (client) => listAllTools(client, signal));
    } catch (error) {
      throw unreachable(target.name, error);
    }
  }

  /** One tools/call, sent again once over a new session when the server forgot the session (it did not run). */
  async callTool(target: McpServerTarget, name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    // The SDK never removes its listener from a request's signal, and cancels on a late abort: each call gets a signal of its own.
    const call = new AbortController();
    const forward = () => call.abort(options.signal.reason);
    if (options.signal.aborted) forward();
    else options.signal.addEventListener('abort', forward, { once: true });
    try {
      return await this.withSession(target, call.signal, (client) =>
        client.request({ method: 'tools/call', params: { name, arguments: args, _meta: options.meta } }, CallToolResultSchema, {
          signal: call.signal,
          timeout: options.idleTimeoutMs,
          resetTimeoutOnProgress: true,
          onprogress: options.onprogress ?? (() => undefined),
        }),
      );
    } finally {
      options.signal.removeEventListener('abort', forward);
    }
  }

  private async withSession<T>(target: McpServerTarget, signal: AbortSignal | undefined, work: (client: Client) => Promise<T>): Promise<T> {
    const connection = this.connectionFor(target);
    this.inFlight.set(target.id, (this.inFlight.get(target.id) ?? 0) + 1);
    try {
      const client = await connection.client(signal);
      try {
        return await work(client);
      } catch (error) {
        if (!isSessionGone(error)) throw error;
        this.logger.info({ mcp_server: target.name }, 'MCP session expired on the server; opening a new one');
        await connection.reset(client);
        return await work(await connection.client(signal));
      }
    } finally {
      const left = (this.inFlight.get(target.id) ?? 1) - 1;
      if (left > 0) this.inFlight.set(target.id, left);
      else this.inFlight.delete(target.id);
    }
  }

  private connectionFor(target: McpServerTarget): McpConnection {
    let connection = this.connections.get(target.id);
    if (!connection) {
      const changed = (client: Client) => this.toolsChanged(target, client);
      connection = target.transport === 'stdio' ? new StdioConnection(target, this.logger, changed) : new HttpConnection(target, this.egress, changed);
      this.connections.set(target.id, connection);
    }
    return connection;
  }

  private toolsChanged(target: McpServerTarget, client: Client): void {
    listAllTools(client).then(
      (tools) => {
        for (const listener of this.listeners) listener(target, tools);
      },
      (error: unknown) => this.logger.warn({ mcp_server: target.name, reason: describeFailure(error) }, 'listing the changed tools of an MCP server failed'),
    );
  }

  private closeIdle(): void {
    const cutoff = Date.now() - IDLE_MS;
    for (const [id, connection] of this.connections) {
      if (connection instanceof StdioConnection || connection.lastUsed > cutoff || this.inFlight.has(id)) continue;
      this.connections.delete(id);
      connection.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map((c) => c.close().catch(() => undefined)));
  }
}
