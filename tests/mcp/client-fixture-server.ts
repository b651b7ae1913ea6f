// An MCP server of the tests' own, on the official SDK's low-level Server, that
// records every tools/call it receives — so a test can say a call was made
// exactly once, or never. Over Streamable HTTP (stateful sessions, which the
// test can make it forget: 404) in the test's process, or over stdio as a child
// (`node --import tsx tests/mcp/client-fixture-server.ts stdio`).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';

export interface ReceivedCall {
  tool: string;
  args: Record<string, unknown>;
  meta: Record<string, unknown> | undefined;
}

/** What every session of one fixture shares. */
export class FixtureState {
  readonly calls: ReceivedCall[] = [];
  /** Calls the client cancelled (notifications/cancelled) while they ran. */
  readonly cancelled: ReceivedCall[] = [];
  readonly extraTools: Tool[] = [];
  readonly servers = new Set<Server>();

  count(tool: string): number {
    return this.calls.filter((c) => c.tool === tool).length;
  }

  /** Adds a tool and tells every open session that the list changed. */
  async addTool(name: string): Promise<void> {
    this.extraTools.push({ name, description: `Added later: ${name}.`, inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } });
    await Promise.all([...this.servers].map((s) => s.sendToolListChanged().catch(() => undefined)));
  }
}

const object = (properties: Record<string, object>, required: string[] = []) => ({
  type: 'object' as const,
  properties,
  required,
  additionalProperties: false,
});
const ms = { type: 'integer', minimum: 0, maximum: 60_000, description: 'How long the tool takes.' };

const TOOLS: Tool[] = [
  {
    name: 'write-note',
    description: 'Writes a note (not idempotent: each call writes one more).',
    inputSchema: object({ text: { type: 'string', minLength: 1 }, ms }, ['text']),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  {
    name: 'read-notes',
    description: 'Reads the notes (read-only).',
    inputSchema: object({ ms }),
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  {
    name: 'bad-structured',
    description: 'Returns structured content that does not satisfy its own output schema.',
    inputSchema: object({}),
    outputSchema: { type: 'object', properties: { value: { type: 'number' } }, required: ['value'] },
    annotations: { readOnlyHint: true },
  },
  { name: 'fail', description: 'Always fails, as a tool result.', inputSchema: object({}), annotations: { readOnlyHint: true } },
  { name: 'pid', description: 'The process id of the server.', inputSchema: object({}), annotations: { readOnlyHint: true } },
  { name: 'exit', description: 'Ends the server process at once.', inputSchema: object({}), annotations: { destructiveHint: true } },
];

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

function fixtureServer(state: FixtureState): Server {
  const server = new Server({ name: 'palai-fixture', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...TOOLS, ...state.extraTools] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const call: ReceivedCall = { tool: request.params.name, args, meta: request.params._meta as Record<string, unknown> | undefined };
    state.calls.push(call);
    const wait = typeof args.ms === 'number' ? args.ms : 0;
    const token = request.params._meta?.progressToken;
    // Progress every 100 ms while it works, as a long operation would.
    for (let done = 0; done < wait; done += 100) {
      await sleep(Math.min(100, wait - done), undefined, { signal: extra.signal }).catch(() => undefined);
      if (extra.signal.aborted) {
        state.cancelled.push(call);
        return text('cancelled');
      }
      if (token !== undefined)
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: done + 100, total: wait } });
    }
    switch (request.params.name) {
      case 'write-note':
        return text(`noted: ${String(args.text)}`);
      case 'read-notes':
        return text(`${state.count('write-note')} notes`);
      case 'bad-structured':
        return { content: [{ type: 'text', text: '{"value":"nope"}' }], structuredContent: { value: 'nope' } };
      case 'fail':
        return { content: [{ type: 'text', text: 'it broke' }], isError: true };
      case 'pid':
        return text(String(process.pid));
      case 'exit':
        setTimeout(() => process.exit(1), 10);
        return new Promise(() => undefined);
      default:
        if (state.extraTools.some((t) => t.name === request.params.name)) return text(`extra: ${request.params.name}`);
        return { content: [{ type: 'text', text: `Unknown tool: ${request.params.name}` }], isError: true };
    }
  });
  state.servers.add(server);
  server.onclose = () => state.servers.delete(server);
  return server;
}

export interface FixtureHttpServer {
  /** The Streamable HTTP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  state: FixtureState;
  /** Sessions opened so far (initialize requests). */
  sessionsOpened(): number;
  /** Forgets every session: their next request is answered 404 (or, as some servers do, 400). */
  forgetSessions(status?: 404 | 400): void;
  /** The headers of the last request. */
  lastHeaders(): IncomingMessage['headers'];
  close(): Promise<void>;
}

function answer(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

export async function startFixtureHttpServer(): Promise<FixtureHttpServer> {
  const state = new FixtureState();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let opened = 0;
  let goneStatus = 404;
  let headers: IncomingMessage['headers'] = {};
  const http = createServer((req, res) => {
    headers = req.headers;
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = transports.get(sessionId);
      if (!transport) return answer(res, goneStatus, goneStatus === 404 ? 'Session not found' : 'Bad Request: No valid session ID provided');
      return void transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return answer(res, 400, 'No session');
    opened++;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void transports.set(id, transport),
    });
    void fixtureServer(state)
      .connect(transport)
      .then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    state,
    sessionsOpened: () => opened,
    forgetSessions: (status = 404) => {
      goneStatus = status;
      transports.clear();
    },
    lastHeaders: () => headers,
    async close() {
      for (const transport of transports.values()) await transport.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'stdio') {
  await fixtureServer(new FixtureState()).connect(new StdioServerTransport());
}
