// A session with a Streamable HTTP server, opened on first use and kept for
// later calls (from any run of the project). Every request goes through the
// egress guard's fetch with the server's headers; a session the server forgot
// is replaced by a new one when asked (reset).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { EgressFetch } from '../../../core/egress/egress-port.js';
import type { McpServerTarget } from '../../../core/surfaces/mcp/mcp-servers-port.js';
import { HANDSHAKE_TIMEOUT_MS, newClient, type McpConnection } from './connection.js';

type HttpTarget = Extract<McpServerTarget, { transport: 'streamable_http' }>;

/** A DELETE of the session when Palai closes it is a courtesy: it does not wait long for one. */
const TERMINATE_TIMEOUT_MS = 2_000;

export class HttpConnection implements McpConnection {
  lastUsed = Date.now();
  private current: { client: Client; transport: StreamableHTTPClientTransport } | null = null;
  private connecting: Promise<Client> | null = null;

  constructor(
    private readonly target: HttpTarget,
    private readonly egress: EgressFetch,
    private readonly onToolsChanged: (client: Client) => void,
  ) {}

  /** The handshake is shared by every caller waiting for it, so it has its own timeout rather than one caller's signal. */
  async client(): Promise<Client> {
    this.lastUsed = Date.now();
    if (this.current) return this.current.client;
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(this.target.url), {
      fetch: (url, init) => this.egress(url, init),
      requestInit: { headers: this.target.headers },
    });
    const client = newClient(this.onToolsChanged);
    await client.connect(transport, { timeout: HANDSHAKE_TIMEOUT_MS });
    this.current = { client, transport };
    return client;
  }

  async reset(stale: Client): Promise<void> {
    if (this.current?.client !== stale) return;
    const { client } = this.current;
    this.current = null;
    // The server no longer knows the session: nothing to DELETE.
    await client.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    const current = this.current;
    this.current = null;
    if (!current) return;
    await Promise.race([
      current.transport.terminateSession().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, TERMINATE_TIMEOUT_MS).unref()),
    ]);
    await current.client.close().catch(() => undefined);
  }
}
