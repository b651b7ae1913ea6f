// Palai as an MCP client: the same echo call to a bare MCP SDK server (one
// tool, the SDK's stateful Streamable HTTP transport, on loopback) made three
// ways, in the same run: by the bare SDK client; by Palai's client (its pooled
// session, the egress guard's fetch, _meta and a progress token); and as a
// durable tool call of a Palai run (a fake-model agent calls the tool, then
// answers: admission, two model steps, the call committed as sent, its output
// committed). On the embedded store (and on PostgreSQL when
// PALAI_BENCH_DATABASE_URL is set). Prints figures; asserts nothing.
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { McpClientPool } from '../adapters/mcp/client/client-pool.js';
import { startHub } from '../cli/hub.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig } from '../core/config.js';
import { createEgressFetch } from '../core/egress/guarded-fetch.js';
import { createLogger } from '../core/logger.js';
import type { McpServerTarget } from '../core/surfaces/mcp/mcp-servers-port.js';
import type { Db } from '../core/store/db.js';
import { onEachStore } from './stores.js';

const CALLS = Number(process.env.PALAI_BENCH_MCP_CLIENT_CALLS ?? 200);
const RUNS = Number(process.env.PALAI_BENCH_MCP_CLIENT_RUNS ?? 50);
const WARMUP = 5;
const INPUT = 'the quick brown fox jumps over the lazy dog';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

/** The bare SDK server: one echo tool. */
async function bareServer(): Promise<{ server: HttpServer; url: string }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const server = createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void transports.set(sid, transport!) });
      const mcp = new Server({ name: 'bare-echo', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          {
            name: 'echo',
            inputSchema: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] },
            annotations: { readOnlyHint: true },
          },
        ],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: String(request.params.arguments?.input ?? '') }] }));
      await mcp.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

async function timed(count: number, call: () => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < WARMUP + count; i++) {
    const started = performance.now();
    await call();
    if (i >= WARMUP) times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

async function bench(label: string, db: Db): Promise<void> {
  const bare = await bareServer();
  const hub = await startHub({
    config: { ...loadConfig({}), logLevel: 'silent', pollIntervalMs: 200, egressAllowHosts: ['127.0.0.1'] },
    db,
    logger: createLogger('silent'),
  });
  const egress = createEgressFetch({ allowHosts: ['127.0.0.1'] });
  const pool = new McpClientPool(egress, createLogger('silent'));
  const client = new Client({ name: 'bench', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(bare.url)));
    const sdkTimes = await timed(CALLS, async () => {
      await client.callTool({ name: 'echo', arguments: { input: INPUT } });
    });

    const target: McpServerTarget = { transport: 'streamable_http', id: 'mcps_bench', projectId: 'proj_bench', name: 'bare', url: bare.url, headers: {} };
    const signal = new AbortController().signal;
    const poolTimes = await timed(CALLS, async () => {
      await pool.callTool(target, 'echo', { input: INPUT }, { meta: { 'palai/idempotency_key': randomUUID() }, signal, idleTimeoutMs: 60_000 });
    });

    const project = await createProject(db, `bench-mcp-client-${Date.now()}`);
    await hub.surfaces.slices.mcp.mcpServers.create(project.id, { name: 'bare', url: bare.url });
    await hub.api.agents.create(project.id, {
      name: 'caller',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'mcp__bare__echo', arguments: { input: INPUT } }] }, { text: 'done' }] },
      tools: [{ type: 'mcp', server_label: 'bare' }],
    });
    const runTimes = await timed(RUNS, async () => {
      const admitted = await hub.api.responses.admit(project.id, { agent: 'caller', input: [{ role: 'user', content: 'go' }] });
      const state = await hub.api.responses.waitUntilSettled(project.id, admitted.id, 30_000);
      if (state.status !== 'completed') throw new Error(`bench run ended ${state.status}: ${JSON.stringify(state.error)}`);
    });

    const p = (times: number[], q: number) => percentile(times, q);
    const line = (what: string, times: number[]) =>
      console.log(
        `${what}: p50 ${fmt(p(times, 50))}, p99 ${fmt(p(times, 99))} (${(p(times, 50) / p(sdkTimes, 50)).toFixed(1)}x / ${(p(times, 99) / p(sdkTimes, 99)).toFixed(1)}x the bare client)`,
      );
    console.log(`\n## MCP client: an echo tools/call, ${label} (sequential, Streamable HTTP on loopback)`);
    console.log(`bare SDK client (${CALLS} calls): p50 ${fmt(p(sdkTimes, 50))}, p99 ${fmt(p(sdkTimes, 99))}`);
    line(`Palai's MCP client (${CALLS} calls)`, poolTimes);
    line(`a Palai run calling the tool (${RUNS} runs, admission to completed)`, runTimes);
  } finally {
    await client.close();
    await pool.close();
    await egress.close();
    await hub.close();
    bare.server.closeAllConnections();
    bare.server.close();
  }
}

export async function benchMcpClient(): Promise<void> {
  await onEachStore((store, db) => bench(store, db));
}

if (import.meta.url === `file://${process.argv[1]}`) await benchMcpClient();
