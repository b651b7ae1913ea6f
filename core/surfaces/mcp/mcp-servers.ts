// The MCP servers a project's agents may use: its own Streamable HTTP servers
// (the mcp_servers table) and the operator's stdio servers (configuration),
// served as one list in which the operator's come first. Each server's tool
// list is cached — a registered server's on its row, so every process shares
// it; a stdio server's in this process, which runs that server — and listed
// again when it is older than TOOLS_FRESH_MS, when asked to, and whenever the
// server says its tools changed. A server out of reach is answered from a
// stale list rather than failing a run that only needs its tools' names.
import type { McpServer, McpServerTool, McpServerToolList } from '../../../generated/schemas.js';
import { isPalaiError, PalaiError } from '../../errors/palai-error.js';
import { unixSeconds } from '../../json.js';
import type { Logger } from '../../logger.js';
import { DEFAULT_PAGE_SIZE, type Page, type PageRequest } from '../../pagination.js';
import type { SecretStore } from '../../secrets/secret-port.js';
import type { Db } from '../../store/db.js';
import {
  deleteServerRow,
  findServerRow,
  httpServerView,
  insertServer,
  listServerRows,
  revealHeaders,
  saveServerTools,
  type McpServerRow,
} from './mcp-server-rows.js';
import {
  modelToolName,
  type McpServerClient,
  type McpServerConnection,
  type McpServers,
  type McpServerTarget,
  type McpToolDescription,
  type StdioServerDeclaration,
} from './mcp-servers-port.js';

/** How long a listed set of tools is used without asking the server again. */
export const TOOLS_FRESH_MS = 5 * 60 * 1000;
/** An operator's server's id: no generated id has an underscore after its prefix. */
const OPERATOR_ID_PREFIX = 'mcps_operator_';

interface ListedTools {
  tools: McpToolDescription[];
  listedAt: Date;
}

type Server = { kind: 'stdio'; declaration: StdioServerDeclaration } | { kind: 'http'; row: McpServerRow };

export interface McpServersDeps {
  db: Db;
  secrets: SecretStore;
  stdioServers: readonly StdioServerDeclaration[];
  logger: Logger;
}

const operatorView = (declaration: StdioServerDeclaration, listed: ListedTools | undefined): McpServer => ({
  id: OPERATOR_ID_PREFIX + declaration.name,
  object: 'mcp_server',
  name: declaration.name,
  transport: 'stdio',
  url: null,
  headers: {},
  tools_listed_at: listed ? unixSeconds(listed.listedAt) : null,
  created_at: null,
});

const toolView = (server: string, tool: McpToolDescription): McpServerTool => ({
  name: tool.name,
  model_name: modelToolName(server, tool.name),
  ...(tool.title !== undefined ? { title: tool.title } : {}),
  ...(tool.description !== undefined ? { description: tool.description } : {}),
  input_schema: tool.inputSchema,
  ...(tool.outputSchema !== undefined ? { output_schema: tool.outputSchema } : {}),
  ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
});

export function createMcpServers({ db, secrets, stdioServers, logger }: McpServersDeps): McpServers {
  let client: McpServerClient | null = null;
  const stdioTools = new Map<string, ListedTools>();
  const operators = [...stdioServers].sort((a, b) => a.name.localeCompare(b.name));

  const visibleOperators = (projectId: string) => operators.filter((d) => d.projects === null || d.projects.includes(projectId));

  async function find(projectId: string, ref: string): Promise<Server> {
    const declaration = visibleOperators(projectId).find((d) => d.name === ref || OPERATOR_ID_PREFIX + d.name === ref);
    if (declaration) return { kind: 'stdio', declaration };
    const row = await findServerRow(db, projectId, ref);
    if (row) return { kind: 'http', row };
    throw new PalaiError('not-found', `No MCP server with id or name ${JSON.stringify(ref)} in this project.`);
  }

  async function targetOf(server: Server): Promise<McpServerTarget> {
    if (server.kind === 'stdio') return { transport: 'stdio', id: OPERATOR_ID_PREFIX + server.declaration.name, ...server.declaration };
    const { row } = server;
    return {
      transport: 'streamable_http',
      id: row.id,
      projectId: row.project_id,
      name: row.name,
      url: row.url,
      headers: await revealHeaders(db, secrets, row),
    };
  }

  function cachedTools(server: Server): ListedTools | null {
    if (server.kind === 'stdio') return stdioTools.get(server.declaration.name) ?? null;
    const { tools, tools_listed_at: listedAt } = server.row;
    return tools && listedAt ? { tools, listedAt: new Date(listedAt) } : null;
  }

  async function remember(target: McpServerTarget, tools: McpToolDescription[]): Promise<ListedTools> {
    if (target.transport === 'stdio') {
      const listed = { tools, listedAt: new Date() };
      stdioTools.set(target.name, listed);
      return listed;
    }
    return { tools, listedAt: await saveServerTools(db, target.id, tools) };
  }

  async function loadTools(server: Server, target: McpServerTarget, refresh: boolean, signal?: AbortSignal): Promise<ListedTools> {
    const cached = cachedTools(server);
    if (!refresh && cached && Date.now() - cached.listedAt.getTime() < TOOLS_FRESH_MS) return cached;
    if (!client) {
      if (cached && !refresh) return cached;
      throw new PalaiError('not-ready', 'This process has no MCP client to reach MCP servers with.');
    }
    try {
      return await remember(target, await client.listTools(target, signal));
    } catch (error) {
      if (cached && !refresh && !signal?.aborted) {
        logger.warn(
          { mcp_server: target.name, err: isPalaiError(error) ? error.message : error },
          'listing the tools of an MCP server failed; using the last list',
        );
        return cached;
      }
      if (isPalaiError(error)) throw error;
      throw new PalaiError('upstream-unavailable', `The MCP server ${JSON.stringify(target.name)} could not be reached.`);
    }
  }

  async function connection(
    projectId: string,
    ref: string,
    options: { refresh?: boolean; signal?: AbortSignal } = {},
  ): Promise<McpServerConnection & { listedAt: Date }> {
    const server = await find(projectId, ref);
    const target = await targetOf(server);
    const { tools, listedAt } = await loadTools(server, target, options.refresh === true, options.signal);
    return { target, tools, listedAt };
  }

  return {
    create: (projectId, request, options) => {
      if (visibleOperators(projectId).some((d) => d.name === request.name)) {
        return Promise.reject(new PalaiError('conflict', `An MCP server named ${JSON.stringify(request.name)} already exists (declared by the operator).`));
      }
      return insertServer(db, secrets, projectId, request, options?.idempotency);
    },

    async get(projectId, ref) {
      const server = await find(projectId, ref);
      return server.kind === 'stdio' ? operatorView(server.declaration, stdioTools.get(server.declaration.name)) : httpServerView(server.row);
    },

    async list(projectId, page: PageRequest): Promise<Page<McpServer>> {
      const size = page.limit ?? DEFAULT_PAGE_SIZE;
      const own = visibleOperators(projectId).map((d) => operatorView(d, stdioTools.get(d.name)));
      // The operator's servers are the first pages; a cursor that is a registered server's id is past them.
      const afterOperator = page.after === undefined ? 0 : own.findIndex((v) => v.id === page.after) + 1;
      const head = page.after === undefined || afterOperator > 0 ? own.slice(afterOperator) : [];
      const wanted = size + 1 - head.length;
      const rowsAfter = page.after === undefined || afterOperator > 0 || page.after.startsWith(OPERATOR_ID_PREFIX) ? undefined : page.after;
      const rows = wanted > 0 ? await listServerRows(db, projectId, { limit: wanted - 1, after: rowsAfter }) : [];
      const all = [...head, ...rows.map(httpServerView)];
      const data = all.slice(0, size);
      return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: all.length > size };
    },

    async delete(projectId, ref) {
      const server = await find(projectId, ref);
      if (server.kind === 'stdio')
        throw new PalaiError(
          'forbidden',
          `The MCP server ${JSON.stringify(server.declaration.name)} is declared by the operator; it cannot be deleted through the API.`,
        );
      await deleteServerRow(db, secrets, server.row);
      return server.row.id;
    },

    async tools(projectId, ref, options = {}): Promise<McpServerToolList> {
      const { target, tools, listedAt } = await connection(projectId, ref, options);
      return { object: 'list', server: target.name, listed_at: unixSeconds(listedAt)!, data: tools.map((tool) => toolView(target.name, tool)) };
    },

    connection: async (projectId, ref, options) => {
      const { target, tools } = await connection(projectId, ref, options);
      return { target, tools };
    },

    useClient(given) {
      client = given;
      given.onToolsChanged((target, tools) => {
        remember(target, tools).catch((error: unknown) =>
          logger.warn({ mcp_server: target.name, err: error }, 'caching the changed tools of an MCP server failed'),
        );
      });
    },
  };
}
