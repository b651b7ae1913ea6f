// What MCP hosts call besides tools and tasks, on the same Server: the
// project's responses and sessions as resources (resources.ts), its agents as
// prompts (prompts.ts), completion of their ids (completion.ts), and the log
// level a run's log notifications are sent at (run-log.ts).
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { MAX_SUBSCRIPTIONS_PER_SESSION } from '../../core/surfaces/mcp/mcp-sessions-port.js';
import { complete } from './completion.js';
import type { McpCaller } from './mcp-server.js';
import { getPrompt, listPrompts } from './prompts.js';
import { listResources, readResource, requireResource, RESOURCE_TEMPLATES } from './resources.js';

/** Turns whatever a handler throws into the JSON-RPC error to answer with (mcp-server.ts). */
export type Guard = <A extends unknown[], R>(work: (...args: A) => Promise<R>) => (...args: A) => Promise<R>;

export function serveBeyondTools(server: Server, { api, projectId, session }: McpCaller, guard: Guard): void {
  server.setRequestHandler(
    ListResourcesRequestSchema,
    guard(async (request) => listResources(api, projectId, request.params?.cursor)),
  );
  server.setRequestHandler(
    ListResourceTemplatesRequestSchema,
    guard(async () => ({ resourceTemplates: RESOURCE_TEMPLATES })),
  );
  server.setRequestHandler(
    ReadResourceRequestSchema,
    guard(async (request) => readResource(api, projectId, request.params.uri)),
  );
  server.setRequestHandler(
    SubscribeRequestSchema,
    guard(async (request) => {
      await requireResource(api, projectId, request.params.uri);
      const kept = await api.mcpSessions.subscribe(session.id, request.params.uri);
      if (!kept) throw new McpError(ErrorCode.InvalidParams, `Too many subscriptions: a session watches at most ${MAX_SUBSCRIPTIONS_PER_SESSION} resources.`);
      return {};
    }),
  );
  server.setRequestHandler(
    UnsubscribeRequestSchema,
    guard(async (request) => {
      // Unsubscribing from what the session does not watch changes nothing, and is no error.
      await api.mcpSessions.unsubscribe(session.id, request.params.uri);
      return {};
    }),
  );

  server.setRequestHandler(
    ListPromptsRequestSchema,
    guard(async (request) => listPrompts(api, projectId, request.params?.cursor)),
  );
  server.setRequestHandler(
    GetPromptRequestSchema,
    guard(async (request) => getPrompt(api, projectId, request.params.name, request.params.arguments)),
  );
  server.setRequestHandler(
    CompleteRequestSchema,
    guard(async (request) => complete(api, projectId, request.params)),
  );

  // Kept in the store: the session's later calls, on any process, log at this level.
  server.setRequestHandler(
    SetLevelRequestSchema,
    guard(async (request) => {
      await api.mcpSessions.setLogLevel(session.id, request.params.level);
      return {};
    }),
  );
}
