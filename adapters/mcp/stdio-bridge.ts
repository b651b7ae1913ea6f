// `palai mcp`: the same tools, resources and prompts over stdio, for a desktop host that starts a
// command. The bridge is an MCP server on stdin/stdout and an MCP client of a
// hub's /mcp, so every guarantee of the HTTP surface holds unchanged; it keeps
// nothing itself. Once the host has initialized, the bridge opens its session on
// the hub with the host's own capabilities, so the hub asks questions through
// elicitation only when the host can answer them.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CancelTaskRequestSchema,
  CancelTaskResultSchema,
  CompleteRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  GetPromptRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  GetTaskResultSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListTasksRequestSchema,
  ListTasksResultSchema,
  ListToolsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ReadResourceRequestSchema,
  ResourceUpdatedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ElicitRequestFormParams,
} from '@modelcontextprotocol/sdk/types.js';
import type { Readable, Writable } from 'node:stream';
import { wireError } from './errors.js';
import { SERVER_CAPABILITIES, SERVER_INFO } from './mcp-server.js';

/** A run may take as long as its agent needs; the hub's progress keeps the call alive meanwhile. */
const CALL_TIMEOUT_MS = 24 * 60 * 60 * 1000;

export interface BridgeOptions {
  /** The hub's base URL (its /mcp is the upstream). */
  url: string;
  apiKey: string;
  /** Where the bridge says what it does: never stdout, which carries the protocol. */
  log: (line: string) => void;
  stdin?: Readable;
  stdout?: Writable;
}

export interface Bridge {
  /** Resolves when the host closes stdin (or `close` is called). */
  closed: Promise<void>;
  close(): Promise<void>;
}

/** The hub's error as the bridge's own, with the message the hub sent. */
function relay(error: unknown): never {
  if (error instanceof McpError) throw wireError(error.code, error.message, error.data);
  throw error;
}

/** Checks the URL and key before serving, so a mistake is one line on stderr, not a host's vague failure. */
export async function probeHub(url: string, apiKey: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch(new URL('/mcp', url), {
      headers: { Authorization: `Bearer ${apiKey}`, Accept: 'text/event-stream' },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new Error(`cannot reach ${new URL('/mcp', url)}: ${(error as Error).message}`);
  }
  await res.body?.cancel();
  if (res.status === 401) throw new Error(`the hub at ${url} refused the API key (PALAI_API_KEY)`);
  if (res.status === 404) throw new Error(`${url} does not serve MCP at /mcp`);
}

export async function serveStdio(options: BridgeOptions): Promise<Bridge> {
  const server = new Server(SERVER_INFO, { capabilities: SERVER_CAPABILITIES });
  let client: Client | null = null;
  let upstreamReady: Promise<Client> | null = null;
  const upstream = (): Promise<Client> => {
    upstreamReady ??= (async () => {
      const hostCanElicit = server.getClientCapabilities()?.elicitation !== undefined;
      const connecting = new Client(
        { name: 'palai-mcp-stdio', version: SERVER_INFO.version },
        { capabilities: hostCanElicit ? { elicitation: { form: {} } } : {} },
      );
      // What the hub says unprompted goes on to the host: a run's log lines, a watched resource's change.
      connecting.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void server.notification(notification));
      connecting.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => void server.notification(notification));
      if (hostCanElicit) {
        connecting.setRequestHandler(ElicitRequestSchema, (request, extra) =>
          server.elicitInput(request.params as ElicitRequestFormParams, { signal: extra.signal, timeout: CALL_TIMEOUT_MS }),
        );
      }
      const transport = new StreamableHTTPClientTransport(new URL('/mcp', options.url), {
        requestInit: { headers: { Authorization: `Bearer ${options.apiKey}` } },
      });
      await connecting.connect(transport);
      client = connecting;
      options.log(`MCP session opened on ${options.url}`);
      return connecting;
    })();
    return upstreamReady;
  };
  server.oninitialized = () => void upstream().catch((error) => options.log(`cannot open a session on ${options.url}: ${(error as Error).message}`));

  server.setRequestHandler(ListToolsRequestSchema, async (request) => (await upstream()).listTools(request.params).catch(relay));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const hub = await upstream();
    if (request.params.task) return hub.request({ method: 'tools/call', params: request.params }, CreateTaskResultSchema).catch(relay);
    const token = request.params._meta?.progressToken;
    const { _meta, ...params } = request.params;
    return hub
      .callTool(params, CallToolResultSchema, {
        signal: extra.signal,
        timeout: CALL_TIMEOUT_MS,
        resetTimeoutOnProgress: true,
        // Progress is asked upstream in any case (it keeps the call alive); it goes on to the host only if it asked.
        onprogress: (progress) => {
          if (token !== undefined) void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } });
        },
      })
      .catch(relay);
  });
  server.setRequestHandler(GetTaskRequestSchema, async (request) =>
    (await upstream()).request({ method: 'tasks/get', params: request.params }, GetTaskResultSchema).catch(relay),
  );
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) =>
    (await upstream())
      .request({ method: 'tasks/result', params: request.params }, CallToolResultSchema, { signal: extra.signal, timeout: CALL_TIMEOUT_MS })
      .catch(relay),
  );
  server.setRequestHandler(ListTasksRequestSchema, async (request) =>
    (await upstream()).request({ method: 'tasks/list', params: request.params }, ListTasksResultSchema).catch(relay),
  );
  server.setRequestHandler(CancelTaskRequestSchema, async (request) =>
    (await upstream()).request({ method: 'tasks/cancel', params: request.params }, CancelTaskResultSchema).catch(relay),
  );

  server.setRequestHandler(ListResourcesRequestSchema, async (request) => (await upstream()).listResources(request.params).catch(relay));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (request) => (await upstream()).listResourceTemplates(request.params).catch(relay));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => (await upstream()).readResource(request.params).catch(relay));
  server.setRequestHandler(SubscribeRequestSchema, async (request) => (await upstream()).subscribeResource(request.params).catch(relay));
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => (await upstream()).unsubscribeResource(request.params).catch(relay));
  server.setRequestHandler(ListPromptsRequestSchema, async (request) => (await upstream()).listPrompts(request.params).catch(relay));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => (await upstream()).getPrompt(request.params).catch(relay));
  server.setRequestHandler(CompleteRequestSchema, async (request) => (await upstream()).complete(request.params).catch(relay));
  // The hub keeps the level and filters its log lines; the bridge passes them all on.
  server.setRequestHandler(SetLevelRequestSchema, async (request) => (await upstream()).setLoggingLevel(request.params.level).catch(relay));

  let closedResolve!: () => void;
  const closed = new Promise<void>((resolve) => (closedResolve = resolve));
  server.onclose = () => closedResolve();
  server.onerror = (error) => options.log(`MCP: ${error.message}`);
  const stdin = options.stdin ?? process.stdin;
  await server.connect(new StdioServerTransport(stdin, options.stdout));
  // The host closing stdin is how it says goodbye; the SDK's transport does not watch for it.
  stdin.once('end', () => closedResolve());

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      const hub = client as Client | null;
      if (hub) {
        // Ends the hub's session: the host will not come back to it.
        await (hub.transport as StreamableHTTPClientTransport | undefined)?.terminateSession().catch(() => undefined);
        await hub.close().catch(() => undefined);
      }
      await server.close().catch(() => undefined);
      closedResolve();
    })());
  closed.then(() => close());
  return { closed, close };
}
