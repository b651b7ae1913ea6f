// GET /mcp with Last-Event-ID: the rest of a tools/call stream, from the
// journal position the id names, on whichever process the host reached. The
// call it belongs to (its request id, its progress token) is in the session's
// store, so the answer ends the stream exactly as the original would have.
import type { Response } from 'express';
import type { McpSurfaceApi } from '../../core/surfaces/mcp/mcp-api.js';
import type { McpSession } from '../../core/surfaces/mcp/mcp-sessions-port.js';
import { outputSchemaOf } from './agent-tools.js';
import { followToResult } from './call-follower.js';
import { toMcpError } from './errors.js';
import { parseEventId } from './event-ids.js';
import { refuse, TRANSPORT_ERROR } from './http-answers.js';
import { RequestStream } from './request-stream.js';

export async function resumeCall(api: McpSurfaceApi, session: McpSession, lastEventId: string, res: Response, signal: AbortSignal): Promise<void> {
  const position = parseEventId(lastEventId);
  const call = position && (await api.mcpSessions.callByResponse(session.id, position.responseId));
  if (!position || !call || call.task) return refuse(res, 400, TRANSPORT_ERROR, 'Bad Request: Last-Event-ID names no stream of this session.');
  const requestId = JSON.parse(call.requestKey) as string | number;
  const stream = new RequestStream(res, 'sse', session.id);
  signal.addEventListener('abort', () => void stream.close(), { once: true });
  const { projectId } = session;
  try {
    const state = await api.responses.get(projectId, call.responseId);
    const agent = await api.agents.get(projectId, state.agent.id).catch(() => null);
    const structured = agent !== null && outputSchemaOf(agent) !== undefined;
    const result = await followToResult(
      { api, projectId, session, stream, signal, structured, progressToken: call.progressToken },
      call.responseId,
      position.sequence,
    );
    if (result) await stream.send({ jsonrpc: '2.0', id: requestId, result });
  } catch (error) {
    const mcp = toMcpError(error, api.logger);
    await stream.send({
      jsonrpc: '2.0',
      id: requestId,
      error: { code: mcp.code, message: mcp.message, ...(mcp.data !== undefined ? { data: mcp.data } : {}) },
    });
  }
}
