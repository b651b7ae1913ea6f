// The MCP surface's cost: a `tools/call` round trip through Palai (an agent on
// the fake model, which echoes its input: admission, a run, the journal, the
// result) against the same call to a bare MCP SDK server with one echo tool, in
// the same run, over Streamable HTTP on loopback with the SDK's own client, on
// the embedded store (and on PostgreSQL when PALAI_BENCH_DATABASE_URL is set).
// Prints figures; asserts nothing.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHub } from '../cli/hub.js';
import { createApiKey } from '../core/auth/api-keys.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import type { Db } from '../core/store/db.js';
import { onEachStore } from './stores.js';

const CALLS = Number(process.env.PALAI_BENCH_MCP_CALLS ?? 200);
const WARMUP = 10;
const INPUT = 'the quick brown fox jumps over the lazy dog';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: HttpServer; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The bare SDK server: one echo tool, the SDK's own stateful Streamable HTTP transport. */
async function bareServer(): Promise<{ server: HttpServer; url: string }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  return listen(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void transports.set(sid, transport!) });
      const mcp = new Server({ name: 'bare-echo', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] } }],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: String(request.params.arguments?.input ?? '') }] }));
      await mcp.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
}

async function roundTrips(url: string, headers: Record<string, string>, tool: string): Promise<number[]> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers } }));
  await client.listTools();
  const times: number[] = [];
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const started = performance.now();
    const result = await client.callTool({ name: tool, arguments: { input: INPUT } });
    if (result.isError) throw new Error(`bench call failed: ${JSON.stringify(result.content)}`);
    if (i >= WARMUP) times.push(performance.now() - started);
  }
  await client.close();
  return times.sort((a, b) => a - b);
}

async function bench(label: string, db: Db): Promise<void> {
  const hub = await startHub({ config: { ...loadConfig({}), logLevel: 'silent', pollIntervalMs: 200 }, db, logger: createLogger('silent') });
  const palai = await listen(hub.app);
  const bare = await bareServer();
  try {
    const project = await createProject(db, `bench-mcp-${Date.now()}`);
    const key = await createApiKey(db, project.id, 'bench');
    const headers = { authorization: `Bearer ${key.secret}` };
    await hub.api.agents.create(project.id, { name: 'echo', model: { provider: 'fake' } });

    const bareTimes = await roundTrips(bare.url, {}, 'echo');
    const palaiTimes = await roundTrips(palai.url, headers, 'echo');
    const p = (times: number[], q: number) => percentile(times, q);
    console.log(`\n## MCP tools/call round trip, ${label} (${CALLS} sequential, SDK client, Streamable HTTP)`);
    console.log(`bare MCP SDK server (echo tool): p50 ${fmt(p(bareTimes, 50))}, p99 ${fmt(p(bareTimes, 99))}`);
    console.log(`through Palai (fake-model agent): p50 ${fmt(p(palaiTimes, 50))}, p99 ${fmt(p(palaiTimes, 99))}`);
    console.log(`ratio Palai / bare: p50 ${(p(palaiTimes, 50) / p(bareTimes, 50)).toFixed(1)}x, p99 ${(p(palaiTimes, 99) / p(bareTimes, 99)).toFixed(1)}x`);
  } finally {
    palai.server.closeAllConnections();
    palai.server.close();
    bare.server.closeAllConnections();
    bare.server.close();
    await hub.close();
  }
}

export async function benchMcpToolsCall(): Promise<void> {
  await onEachStore((store, db) => bench(`${store}`, db));
}

if (import.meta.url === `file://${process.argv[1]}`) await benchMcpToolsCall();
