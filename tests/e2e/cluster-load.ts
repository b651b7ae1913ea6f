// Clients of a cluster under fault: a load balancer that knows which API
// processes are up (as a health-checking one would) and rewrites every request
// to one of them, and the official A2A and MCP SDK clients speaking through it.
// Each client retries only where its protocol makes a retry safe: REST with the
// same Idempotency-Key, A2A with the same messageId, MCP by resuming its stream
// from the last event id. Not a test file itself.
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { API_KEY, baseOf, type HubProcess } from './cluster.js';

/** True for a request that never reached a server: nothing listens there, so sending it elsewhere cannot run anything twice. */
const refused = (error: unknown): boolean => (error as { cause?: { code?: string } })?.cause?.code === 'ECONNREFUSED';

/**
 * The API processes that are up, in turn. A request refused by a process that
 * is gone is sent to the next one; every other failure is the client's to handle.
 */
export class Balancer {
  private readonly live: HubProcess[] = [];
  private next = 0;
  /** Requests rerouted after a refused connection. */
  rerouted = 0;
  /** MCP stream resumptions (GET with Last-Event-ID). */
  resumes = 0;

  up(node: HubProcess): void {
    this.live.push(node);
  }

  down(node: HubProcess): void {
    const index = this.live.indexOf(node);
    if (index !== -1) this.live.splice(index, 1);
  }

  /** The base URL of the next live process. */
  base(): string {
    if (this.live.length === 0) throw new Error('no API process is up');
    return baseOf(this.live[this.next++ % this.live.length]);
  }

  /** A fetch that sends each request to the next live process, whatever host its URL names. */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const original = new URL(input instanceof Request ? input.url : input);
    if (new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).has('last-event-id')) this.resumes++;
    for (let attempt = 0; ; attempt++) {
      const target = new URL(original.pathname + original.search, this.base());
      try {
        return input instanceof Request ? await fetch(new Request(target, input), init) : await fetch(target, init);
      } catch (error) {
        if (!refused(error) || attempt >= 5) throw error;
        this.rerouted++;
      }
    }
  };
}

/** The SDK's ClientFactory for one agent, through the balancer, with the bootstrap key. */
export async function a2aThrough(balancer: Balancer, agent: string, binding: 'JSONRPC' | 'HTTP+JSON'): Promise<A2aClient> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${API_KEY}`);
    return balancer.fetch(input as string | URL | Request, { ...init, headers });
  };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [binding],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(`${balancer.base()}/a2a/${agent}/`);
}

/**
 * An MCP session through the balancer. Its reconnection budget outlasts a
 * takeover (a lease of a few seconds) and a database reset.
 */
export async function mcpThrough(balancer: Balancer): Promise<McpClient> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', balancer.base()), {
    requestInit: { headers: { Authorization: `Bearer ${API_KEY}` } },
    fetch: balancer.fetch,
    reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 40 },
  });
  const client = new McpClient({ name: 'palai-cluster-load', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

/** One logical client request: when it was issued and answered, and how many times it was sent again. */
export interface Timed {
  startedAt: number;
  endedAt: number;
  retries: number;
}

/** The p-quantile (0..1) of the latencies of `requests`, in ms; 0 for none. */
export function quantile(requests: Timed[], p: number): number {
  const sorted = requests.map((r) => r.endedAt - r.startedAt).sort((x, y) => x - y);
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]);
}

/** Runs `lane(index)` `count` times at once and waits for all. */
export function lanes(count: number, lane: (index: number) => Promise<void>): Promise<void> {
  return Promise.all(Array.from({ length: count }, (_, i) => lane(i))).then(() => undefined);
}
