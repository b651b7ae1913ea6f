// The MCP methods Palai serves, on the SDK's Server: tools (one per agent) and
// tasks (one per response) here, resources, prompts, completion and logging in
// beyond-tools.ts. One Server is built per HTTP request, for one caller and
// session; everything it needs beyond the request comes from the
// kernel, so the next request of the same session may go to any process.
import { createHash } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { isTerminal, type ResponseState } from '../../core/api/index.js';
import type { McpSurfaceApi } from '../../core/surfaces/mcp/mcp-api.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import { MAX_INBOX_KEY_LENGTH } from '../../core/idempotency/inbox-port.js';
import type { McpSession } from '../../core/surfaces/mcp/mcp-sessions-port.js';
import { agentNamed, outputSchemaOf, parseArguments, toolOf } from './agent-tools.js';
import { serveBeyondTools, type Guard } from './beyond-tools.js';
import { callFailure, toMcpError, toolError } from './errors.js';
import { followToResult } from './call-follower.js';
import { eventId } from './event-ids.js';
import { PRIMING_FROM_VERSION, type RequestStream } from './request-stream.js';
import { toTask } from './task-view.js';

export const SERVER_INFO = { name: 'palai', title: 'Palai', version: '0.1.0' };

export const SERVER_CAPABILITIES: ServerCapabilities = {
  tools: { listChanged: false },
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  resources: { subscribe: true, listChanged: false },
  prompts: { listChanged: false },
  completions: {},
  logging: {},
};

const INSTRUCTIONS =
  'Each tool is a Palai agent: call it with {"input": "..."} (and "session_id" to continue a Palai session). ' +
  'A long run may be called as a task and polled. The result carries _meta["palai/response_id"]. ' +
  'Each response (palai://responses/{response_id}) and session (palai://sessions/{session_id}) is a resource; each agent is also a prompt.';

const TOOLS_PAGE_SIZE = 100;
const TASKS_PAGE_SIZE = 50;
/** How long tasks/cancel waits for a running task to stop, so its answer usually says `cancelled`. */
const CANCEL_SETTLE_MS = 5_000;

export interface McpCaller {
  api: McpSurfaceApi;
  projectId: string;
  session: McpSession;
  stream: RequestStream;
}

/** The JSON text of a JSON-RPC id: how a session's calls are keyed in the store. */
export const requestKeyOf = (id: string | number): string => JSON.stringify(id);

/** The inbox key of a call: the request id within its session (hashed when it would be too long). */
function inboxKey(sessionId: string, requestKey: string): string {
  const key = `${sessionId}:${requestKey}`;
  return key.length <= MAX_INBOX_KEY_LENGTH ? key : `${sessionId}:sha256:${createHash('sha256').update(requestKey).digest('hex')}`;
}

/** A task is a response of the caller's project; any other id is "not found" in the protocol's terms. */
async function taskState(api: McpSurfaceApi, projectId: string, taskId: string): Promise<ResponseState> {
  try {
    return await api.responses.get(projectId, taskId);
  } catch (error) {
    if (isPalaiError(error) && error.slug === 'not-found') throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    throw error;
  }
}

/** Whether the agent behind a response answers with structured content. */
async function isStructured(api: McpSurfaceApi, projectId: string, state: ResponseState): Promise<boolean> {
  const agent = await agentNamed(api, projectId, state.agent.id);
  return agent !== null && outputSchemaOf(agent) !== undefined;
}

export function createMcpServer(caller: McpCaller): Server {
  const { api, projectId, session, stream } = caller;
  const server = new Server(SERVER_INFO, { capabilities: SERVER_CAPABILITIES, instructions: INSTRUCTIONS });
  server.onerror = (error) => api.logger.debug({ err: error }, 'MCP protocol error');
  const guard: Guard =
    <A extends unknown[], R>(work: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await work(...args);
      } catch (error) {
        throw toMcpError(error, api.logger);
      }
    };

  server.setRequestHandler(
    ListToolsRequestSchema,
    guard(async (request) => {
      const page = await api.agents.list(projectId, { limit: TOOLS_PAGE_SIZE, after: request.params?.cursor });
      return { tools: page.data.map(toolOf), ...(page.has_more && page.last_id ? { nextCursor: page.last_id } : {}) };
    }),
  );

  server.setRequestHandler(
    CallToolRequestSchema,
    guard(async (request, extra) => {
      const { name, arguments: args, task } = request.params;
      const agent = await agentNamed(api, projectId, name);
      if (!agent) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}. The tools are this project's agents; tools/list lists them.`);
      const parsed = parseArguments(args);
      if (typeof parsed === 'string') return toolError(parsed);
      const requestKey = requestKeyOf(extra.requestId);
      let state: ResponseState;
      try {
        state = await api.inbox.once(
          {
            projectId,
            source: 'mcp',
            key: inboxKey(session.id, requestKey),
            operation: 'tools/call',
            fingerprint: api.inbox.fingerprint('tools/call', { tool: agent.id }, parsed),
          },
          (claim) =>
            api.responses.admit(
              projectId,
              {
                agent: agent.id,
                input: [{ role: 'user', content: parsed.input }],
                ...(parsed.sessionId ? { session: { kind: 'id', id: parsed.sessionId } } : {}),
                metadata: { mcp_session: session.id },
              },
              { idempotency: claim },
            ),
          (record) => api.responses.get(projectId, record.resourceId!),
        );
      } catch (error) {
        return callFailure(error, api.logger);
      }
      const progressToken = request.params._meta?.progressToken ?? null;
      await api.mcpSessions.recordCall({ sessionId: session.id, requestKey, responseId: state.id, progressToken, task: task !== undefined });
      if (task) return { task: toTask(state) };
      if (session.protocolVersion >= PRIMING_FROM_VERSION) stream.event(null, eventId({ responseId: state.id, sequence: -1 }));
      const result = await followToResult(
        { api, projectId, session, stream, signal: extra.signal, structured: outputSchemaOf(agent) !== undefined, progressToken },
        state.id,
        -1,
      );
      // The host went away: nothing is sent (the run goes on; it may resume the stream or poll the response).
      if (!result) throw new McpError(ErrorCode.ConnectionClosed, 'The stream closed.');
      return result;
    }),
  );

  server.setRequestHandler(
    GetTaskRequestSchema,
    guard(async (request) => toTask(await taskState(api, projectId, request.params.taskId))),
  );

  server.setRequestHandler(
    GetTaskPayloadRequestSchema,
    guard(async (request, extra) => {
      const taskId = request.params.taskId;
      const state = await taskState(api, projectId, taskId);
      const structured = await isStructured(api, projectId, state);
      const last = await api.responses.lastSequence(projectId, taskId);
      const result = await followToResult({ api, projectId, session, stream, signal: extra.signal, structured, taskId }, taskId, last);
      if (!result) throw new McpError(ErrorCode.ConnectionClosed, 'The stream closed.');
      const withTask: CallToolResult = { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
      return withTask;
    }),
  );

  server.setRequestHandler(
    ListTasksRequestSchema,
    guard(async (request) => {
      const page = await api.responses.list(projectId, {}, { limit: TASKS_PAGE_SIZE, after: request.params?.cursor });
      return { tasks: page.data.map(toTask), ...(page.has_more && page.last_id ? { nextCursor: page.last_id } : {}) };
    }),
  );

  server.setRequestHandler(
    CancelTaskRequestSchema,
    guard(async (request) => {
      const taskId = request.params.taskId;
      const state = await taskState(api, projectId, taskId);
      if (isTerminal(state.status)) throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${toTask(state).status}`);
      await api.responses.cancel(projectId, taskId);
      return toTask(await api.responses.waitUntilSettled(projectId, taskId, CANCEL_SETTLE_MS));
    }),
  );

  serveBeyondTools(server, caller, guard);

  return server;
}
