// An operator's stdio server: one child process per Palai process, started on
// first use and kept running for every run of the projects allowed to use it.
// When it dies it is started again after a pause that doubles with each death
// in a row (RESTART_BASE_MS up to RESTART_MAX_MS) and falls back once a process
// stayed up for STABLE_MS, so a server that crashes at once cannot spin. A call
// made while it is down waits for the next start, and fails with what went
// wrong if that start fails.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Logger } from '../../../core/logger.js';
import type { McpServerTarget } from '../../../core/surfaces/mcp/mcp-servers-port.js';
import { HANDSHAKE_TIMEOUT_MS, newClient, type McpConnection } from './connection.js';
import { describeFailure } from './failures.js';

type StdioTarget = Extract<McpServerTarget, { transport: 'stdio' }>;

export const RESTART_BASE_MS = 500;
export const RESTART_MAX_MS = 30_000;
const STABLE_MS = 60_000;
const MAX_STDERR_LOG = 500;

interface Running {
  client: Client;
  transport: StdioClientTransport;
  startedAt: number;
}

export class StdioConnection implements McpConnection {
  lastUsed = Date.now();
  private running: Running | null = null;
  private starting: Promise<Client> | null = null;
  /** Deaths in a row; the next pause is RESTART_BASE_MS × 2^(deaths − 1). */
  private deaths = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  /** Settled by the next start (scheduled or not): what callers waiting through a restart get. */
  private nextStart: { promise: Promise<Client>; resolve(client: Client): void; reject(error: unknown): void } | null = null;
  private closed = false;

  constructor(
    private readonly target: StdioTarget,
    private readonly logger: Logger,
    private readonly onToolsChanged: (client: Client) => void,
  ) {}

  async client(signal?: AbortSignal): Promise<Client> {
    this.lastUsed = Date.now();
    if (this.closed) throw new Error('the MCP client is closed');
    if (this.running) return this.running.client;
    if (this.starting) return this.starting;
    if (this.restartTimer) return this.waitForRestart(signal);
    return this.start();
  }

  private waitForRestart(signal?: AbortSignal): Promise<Client> {
    if (!this.nextStart) {
      let resolve!: (client: Client) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<Client>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => undefined);
      this.nextStart = { promise, resolve, reject };
    }
    const waiting = this.nextStart.promise;
    if (!signal) return waiting;
    return new Promise<Client>((resolve, reject) => {
      const abort = () => reject(signal.reason);
      if (signal.aborted) return abort();
      signal.addEventListener('abort', abort, { once: true });
      waiting.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
    });
  }

  private start(): Promise<Client> {
    const attempt = this.spawn();
    this.starting = attempt.finally(() => {
      this.starting = null;
    });
    const next = this.nextStart;
    this.nextStart = null;
    attempt.then(
      (client) => next?.resolve(client),
      (error: unknown) => next?.reject(error),
    );
    return this.starting;
  }

  private async spawn(): Promise<Client> {
    const { name, command, args, env, cwd } = this.target;
    const transport = new StdioClientTransport({ command, args, env, ...(cwd ? { cwd } : {}), stderr: 'pipe' });
    // The server's own diagnostics, for an operator who turns on debug logs.
    transport.stderr?.on('data', (chunk: Buffer) =>
      this.logger.debug({ mcp_server: name, stderr: chunk.toString('utf8').slice(0, MAX_STDERR_LOG) }, 'stdio MCP server wrote to stderr'),
    );
    const client = newClient(this.onToolsChanged);
    const startedAt = Date.now();
    client.onclose = () => this.exited(client);
    try {
      await client.connect(transport, { timeout: HANDSHAKE_TIMEOUT_MS });
    } catch (error) {
      client.onclose = undefined;
      await transport.close().catch(() => undefined);
      this.logger.warn({ mcp_server: name, reason: describeFailure(error) }, 'stdio MCP server did not start');
      this.scheduleRestart();
      throw new Error(`it did not start: ${describeFailure(error)}`);
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      throw new Error('the MCP client is closed');
    }
    this.running = { client, transport, startedAt };
    this.logger.info({ mcp_server: name, pid: transport.pid }, 'stdio MCP server started');
    return client;
  }

  /** The process ended (or its pipe closed): not by Palai's hand, so start it again after a pause. */
  private exited(client: Client): void {
    if (this.running?.client !== client) return;
    const lived = Date.now() - this.running.startedAt;
    this.running = null;
    if (this.closed) return;
    if (lived >= STABLE_MS) this.deaths = 0;
    this.logger.warn({ mcp_server: this.target.name, lived_ms: lived }, 'stdio MCP server exited; restarting it');
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.closed || this.restartTimer) return;
    this.deaths++;
    const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** (this.deaths - 1));
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (!this.closed && !this.running && !this.starting) this.start().catch(() => undefined);
    }, delay);
    this.restartTimer.unref();
  }

  async reset(): Promise<void> {
    // A stdio session lives as long as its process; there is nothing to renew.
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.nextStart?.reject(new Error('the MCP client is closed'));
    this.nextStart = null;
    const running = this.running;
    this.running = null;
    await running?.client.close().catch(() => undefined);
  }
}
