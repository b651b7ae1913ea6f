// The MCP servers port: the servers whose tools a project's agents may use, and
// how the kernel reaches them. Two kinds:
//
//   streamable_http  registered by an API caller (POST /v1/mcp_servers) for one
//                    project; its header values live in the secret store
//   stdio            a command the operator declared in a file
//                    (PALAI_MCP_STDIO_SERVERS_FILE); read-only to the API, since
//                    an API caller must never choose what runs on the host
//
// The kernel keeps the servers and their tool lists; talking MCP is the MCP
// client adapter's (adapters/mcp/client), which implements McpServerClient and
// is handed to the kernel by the composition root. The tool provider reads a
// server's target and tools through `McpServers.connection`.
//
// Reading order: this file (the contract), stdio-declarations.ts (the operator's
// file), mcp-server-rows.ts (the table), mcp-servers.ts (the service).
import type { CreateMcpServerRequest, McpServer, McpServerToolList } from '../../../generated/schemas.js';
import type { IdempotencyClaim } from '../../idempotency/inbox-port.js';
import type { Page, PageRequest } from '../../pagination.js';

/** One server the operator declared: the command Palai runs and speaks MCP to over stdin and stdout. */
export interface StdioServerDeclaration {
  name: string;
  command: string;
  args: string[];
  /** Added to a small safe environment (PATH, HOME, …); Palai's own environment is not passed on. */
  env: Record<string, string>;
  cwd: string | null;
  /** Project ids that may use it; null: every project. */
  projects: string[] | null;
}

/** Where and how to reach a server, with its secrets: for the one call that uses it, never for an answer or a log line. */
export type McpServerTarget =
  | { transport: 'streamable_http'; id: string; projectId: string; name: string; url: string; headers: Record<string, string> }
  | ({ transport: 'stdio'; id: string } & StdioServerDeclaration);

/** A tool as the server listed it (MCP's Tool, the fields Palai uses). */
export interface McpToolDescription {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

/** The MCP client side, implemented by the adapter: lists a server's tools over its (pooled) session. */
export interface McpServerClient {
  /** The server's tools now. Rejects with a PalaiError (`egress-denied`, `upstream-unavailable`) naming what went wrong. */
  listTools(target: McpServerTarget, signal?: AbortSignal): Promise<McpToolDescription[]>;
  /** Called with a server's new tools whenever it says they changed (`notifications/tools/list_changed`). */
  onToolsChanged(listener: (target: McpServerTarget, tools: McpToolDescription[]) => void): void;
}

/** What the tool provider needs for one run: how to reach the server, and its tools. */
export interface McpServerConnection {
  target: McpServerTarget;
  tools: McpToolDescription[];
}

export interface McpServers {
  /** Registers a Streamable HTTP server; nothing is called yet. Header values go to the secret store. */
  create(projectId: string, request: CreateMcpServerRequest, options?: { idempotency?: IdempotencyClaim }): Promise<McpServer>;
  /** By name or id; the operator's stdio servers the project may use come first and shadow a project's server of the same name. */
  get(projectId: string, ref: string): Promise<McpServer>;
  list(projectId: string, page: PageRequest): Promise<Page<McpServer>>;
  /** Forgets a registered server and its stored headers; an operator's server is `forbidden`. */
  delete(projectId: string, ref: string): Promise<string>;
  /** The server's tools: the cached list while fresh (or when the server is out of reach), else listed now; `refresh` lists now. */
  tools(projectId: string, ref: string, options?: { refresh?: boolean; signal?: AbortSignal }): Promise<McpServerToolList>;
  /** The target and its tools for a run that calls the server (the tool provider); `refresh` lists the tools now. */
  connection(projectId: string, ref: string, options?: { refresh?: boolean; signal?: AbortSignal }): Promise<McpServerConnection>;
  /** The composition root hands the kernel the MCP client once; without one, listing tools is `not-ready`. */
  useClient(client: McpServerClient): void;
}

/** The function the model sees for a server's tool (core/tools/tool-names.ts). */
export { mcpToolName as modelToolName } from '../../tools/tool-names.js';
