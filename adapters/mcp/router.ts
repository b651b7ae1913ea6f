// The Streamable HTTP endpoint, /mcp (MCP 2025-11-25, and the versions the SDK
// negotiates down to):
//
//   POST    one JSON-RPC message: `initialize` opens a session (Mcp-Session-Id),
//           anything else names it; requests are answered as JSON, or as an SSE
//           stream for tools/call and tasks/result
//   GET     the session's own stream: notifications/resources/updated for
//           what it subscribed to (subscription-stream.ts); with a Last-Event-ID
//           of a tools/call stream, the rest of that call from the journal
//   DELETE  ends the session
//
// Every request takes a project API key as a bearer token (401 otherwise). The
// session lives in the store, so any Palai process serves any request of it.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import {
  ElicitResultSchema,
  ErrorCode,
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  JSONRPCMessageSchema,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../core/api/index.js';
import { isOutage } from '../../core/errors/palai-error.js';
import type { McpSurfaceApi } from '../../core/surfaces/mcp/mcp-api.js';
import type { McpSession } from '../../core/surfaces/mcp/mcp-sessions-port.js';
import { applyElicitationAnswer, parseElicitationId } from './elicitation.js';
import { toMcpError } from './errors.js';
import { INVALID_REQUEST, PARSE_ERROR, refuse, resourceMetadataUrl, SESSION_NOT_FOUND, TRANSPORT_ERROR } from './http-answers.js';
import { createMcpServer, requestKeyOf } from './mcp-server.js';
import { checkOrigin } from './origin.js';
import { RequestStream, type AnswerMode } from './request-stream.js';
import { resumeCall } from './resume.js';
import { parseFeedEventId, serveSubscriptions, SessionEnds } from './subscription-stream.js';

const SESSION_HEADER = 'mcp-session-id';
const VERSION_HEADER = 'mcp-protocol-version';

const originOf = (req: Request): string => `${req.protocol}://${req.get('host')}`;

/** The bearer key's principal into res.locals; 401 (pointing at the resource metadata) otherwise. */
function authenticate(api: McpSurfaceApi) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
    const principal = match ? await api.authenticate(match[1]) : null;
    if (principal) {
      res.locals.principal = principal;
      return next();
    }
    const challenge = `Bearer${match ? ' error="invalid_token",' : ''} resource_metadata="${resourceMetadataUrl(originOf(req))}"`;
    refuse(res, 401, TRANSPORT_ERROR, match ? 'The API key is unknown or revoked.' : 'Send a project API key as "Authorization: Bearer <key>".', {
      'WWW-Authenticate': challenge,
    });
  };
}

/** The live session the request names (its version checked), or null when an answer has been sent. */
async function sessionOf(api: McpSurfaceApi, req: Request, res: Response): Promise<McpSession | null> {
  const id = req.get(SESSION_HEADER);
  if (!id) {
    refuse(res, 400, TRANSPORT_ERROR, 'Bad Request: Mcp-Session-Id header is required (send initialize first).');
    return null;
  }
  const { projectId, keyId } = res.locals.principal as Principal;
  const found = await api.mcpSessions.use(projectId, id);
  // Bound to the key that opened it: another key, even of the same project, must initialize its own.
  const session = found && found.keyId === keyId ? found : null;
  if (!session) {
    refuse(res, 404, SESSION_NOT_FOUND, 'Session not found: initialize a new one.');
    return null;
  }
  // Any version Palai speaks passes, as with the SDK's own transport: hosts (and the conformance suite) do not all repeat the negotiated one.
  const version = req.get(VERSION_HEADER);
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    refuse(res, 400, TRANSPORT_ERROR, `Bad Request: unsupported protocol version ${version} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`);
    return null;
  }
  return session;
}

/** Ends with the host's connection or the process's shutdown. */
function requestSignal(api: McpSurfaceApi, res: Response): AbortSignal {
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  return AbortSignal.any([gone.signal, api.lifecycle.closing]);
}

/** Runs one request on a fresh SDK Server, answering as JSON or as a stream. */
async function dispatch(api: McpSurfaceApi, res: Response, session: McpSession, message: JSONRPCRequest, mode: AnswerMode): Promise<void> {
  const stream = new RequestStream(res, mode, session.id);
  const server = createMcpServer({ api, projectId: session.projectId, session, stream });
  requestSignal(api, res).addEventListener('abort', () => void stream.close(), { once: true });
  await server.connect(stream);
  stream.deliver(message);
}

const streams = (message: JSONRPCRequest): boolean =>
  (message.method === 'tools/call' && (message.params as { task?: unknown } | undefined)?.task === undefined) || message.method === 'tasks/result';

/** A message without an id to answer: an elicitation answer, a cancellation, `initialized`. */
async function absorb(api: McpSurfaceApi, session: McpSession, message: JSONRPCMessage): Promise<void> {
  if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
    const target = parseElicitationId(message.id);
    if (!target) return;
    const parsed = isJSONRPCResultResponse(message) ? ElicitResultSchema.safeParse(message.result) : null;
    await applyElicitationAnswer(api, session.projectId, target, parsed?.success ? parsed.data : null);
    return;
  }
  if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
    const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const call = await api.mcpSessions.callByRequest(session.id, requestKeyOf(requestId));
    // A task is cancelled with tasks/cancel; this notification only ends plain calls.
    if (call && !call.task) await api.responses.cancel(session.projectId, call.responseId);
  }
}

function post(api: McpSurfaceApi) {
  return async (req: Request, res: Response): Promise<void> => {
    const accept = req.get('accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return refuse(res, 406, TRANSPORT_ERROR, 'Not Acceptable: Client must accept both application/json and text/event-stream.');
    }
    if (!req.is('application/json')) return refuse(res, 415, TRANSPORT_ERROR, 'Unsupported Media Type: Content-Type must be application/json.');
    let body: unknown;
    try {
      body = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
    } catch {
      return refuse(res, 400, PARSE_ERROR, 'Parse error: the body is not valid JSON.');
    }
    if (Array.isArray(body)) return refuse(res, 400, INVALID_REQUEST, 'Invalid Request: send one JSON-RPC message per request (batches are not supported).');
    const parsed = JSONRPCMessageSchema.safeParse(body);
    if (!parsed.success) return refuse(res, 400, INVALID_REQUEST, 'Invalid Request: the body is not a JSON-RPC 2.0 message.');
    const message = parsed.data;

    if (isJSONRPCRequest(message) && isInitializeRequest(message)) {
      if (req.get(SESSION_HEADER)) return refuse(res, 400, INVALID_REQUEST, 'Invalid Request: this session is already initialized.');
      const { projectId, keyId } = res.locals.principal as Principal;
      const requested = message.params.protocolVersion;
      const session = await api.mcpSessions.open({
        projectId,
        keyId,
        // As the SDK negotiates: the host's version when supported, else the latest.
        protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
        clientInfo: message.params.clientInfo as unknown as Record<string, unknown>,
        clientCapabilities: message.params.capabilities as Record<string, unknown>,
      });
      res.setHeader('Mcp-Session-Id', session.id);
      return dispatch(api, res, session, message, 'json');
    }

    const session = await sessionOf(api, req, res);
    if (!session) return;
    res.setHeader('Mcp-Session-Id', session.id);
    if (isJSONRPCRequest(message)) return dispatch(api, res, session, message, streams(message) ? 'sse' : 'json');
    await absorb(api, session, message);
    res.status(202).end();
  };
}

function get(api: McpSurfaceApi, ends: SessionEnds) {
  return async (req: Request, res: Response): Promise<void> => {
    if (!(req.get('accept') ?? '').includes('text/event-stream'))
      return refuse(res, 406, TRANSPORT_ERROR, 'Not Acceptable: Client must accept text/event-stream.');
    const session = await sessionOf(api, req, res);
    if (!session) return;
    res.setHeader('Mcp-Session-Id', session.id);
    const lastEventId = req.get('last-event-id');
    const feedCursor = lastEventId === undefined ? undefined : parseFeedEventId(lastEventId);
    if (lastEventId !== undefined && feedCursor === null) return resumeCall(api, session, lastEventId, res, requestSignal(api, res));
    await serveSubscriptions(api, ends, session, res, requestSignal(api, res), feedCursor ?? undefined);
  };
}

function remove(api: McpSurfaceApi, ends: SessionEnds) {
  return async (req: Request, res: Response): Promise<void> => {
    const session = await sessionOf(api, req, res);
    if (!session) return;
    if (await api.mcpSessions.end(session.projectId, session.id)) {
      await ends.announce(session.id).catch((error) => api.logger.warn({ err: error }, 'announcing an ended MCP session failed'));
    }
    res.status(200).end();
  };
}

/** Any failure outside a method (the store down, a body too large): a JSON-RPC error, never a stack trace. */
function answerFailure(api: McpSurfaceApi) {
  return (error: unknown, _req: Request, res: Response, _next: NextFunction): void => {
    const bodyError = error as { type?: string; status?: number };
    if (bodyError.type === 'entity.too.large') return refuse(res, 413, INVALID_REQUEST, 'The request body is too large.');
    if (res.headersSent) {
      res.end();
      return;
    }
    const mcp = toMcpError(error, api.logger);
    // A caller's mistake is its own (400); Palai's outage passes (503, with when to come back); anything else is ours.
    if (mcp.code === ErrorCode.InvalidParams) return refuse(res, 400, mcp.code, mcp.message);
    if (isOutage(error)) return refuse(res, 503, mcp.code, mcp.message, { 'Retry-After': '2' });
    refuse(res, 500, mcp.code, mcp.message);
  };
}

export function mcpRouter(api: McpSurfaceApi): Router {
  const router = express.Router();
  const ends = new SessionEnds(api);
  router.use(checkOrigin);
  router.use(authenticate(api));
  router.post('/', express.raw({ type: () => true, limit: api.config.maxBodyBytes }), post(api));
  router.get('/', get(api, ends));
  router.delete('/', remove(api, ends));
  router.all('/', (_req: Request, res: Response) => refuse(res, 405, TRANSPORT_ERROR, 'Method Not Allowed.', { Allow: 'GET, POST, DELETE' }));
  router.use((req: Request, res: Response) => refuse(res, 404, TRANSPORT_ERROR, `No MCP route ${req.method} ${req.originalUrl}.`));
  router.use(answerFailure(api));
  return router;
}
