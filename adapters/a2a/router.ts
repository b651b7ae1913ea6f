// The A2A surface: every agent of the caller's project, served under
// /a2a/{agent}/ (its name or id) by the SDK's express handlers over Palai's own
// request handler.
//
//   GET  /a2a/                                   the project's agent cards (paged)
//   GET  /a2a/{agent}/.well-known/agent-card.json  the agent's card
//   POST /a2a/{agent}/jsonrpc                    the JSON-RPC binding (1.0, and 0.3 for older clients)
//   *    /a2a/{agent}/rest/…                     the HTTP+JSON binding (1.0 paths, and 0.3's /v1/… paths)
//
// Every route takes a project API key as a bearer token; without a valid one
// the answer is 401. The one exception is a card its agent made public
// (metadata a2a_card=public), fetched by the agent's id.
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { A2A_ERROR_CODE, RequestMalformedError, TaskNotFoundError, toRestErrorBody } from '@a2a-js/sdk/errors';
import { agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { AgentCard } from '@a2a-js/sdk';
import type { A2aSurfaceApi } from '../../core/surfaces/a2a/a2a-api.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import type { Agent } from '../../generated/schemas.js';
import { cardFor, hasPublicCard, JSONRPC_PATH, REST_PATH, servedCard } from './agent-card.js';
import { Caller } from './caller.js';
import { ServiceUnavailableError, toA2aError } from './errors.js';
import { KernelRequestHandler } from './request-handler.js';
import { readBody } from './request-body.js';
import { restWireAsSpecified } from './rest-wire.js';
import { answerOutagesAs503, answerUnavailable } from './unavailable.js';

const CARD_PATH = '/.well-known/agent-card.json';
const LEGACY = { enabled: true };

/** Where the surface and an agent are, as the caller reached them (the card's URLs follow the request). */
const surfaceUrl = (req: Request): string => `${req.protocol}://${req.get('host')}${req.baseUrl}`;

function refuse(res: Response, status: number, message: string, jsonRpc: boolean): void {
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  if (jsonRpc) {
    const code = status >= 500 ? A2A_ERROR_CODE.INTERNAL_ERROR : A2A_ERROR_CODE.INVALID_REQUEST;
    res.status(status).json({ jsonrpc: '2.0', id: null, error: { code, message } });
    return;
  }
  // A failure of ours is no A2A error: the body says INTERNAL.
  const error = status >= 500 ? new Error(message) : status === 404 ? new TaskNotFoundError(message) : new RequestMalformedError(message);
  const body = toRestErrorBody(error, status);
  if (status === 401) body.error.status = 'UNAUTHENTICATED';
  res.status(status).json(body);
}

/** The request's bearer key's project, or null (an answer has been sent). */
async function projectOf(api: A2aSurfaceApi, req: Request): Promise<string | null | undefined> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
  if (!match) return undefined;
  return (await api.authenticate(match[1]))?.projectId ?? null;
}

/** Aborts when the caller hangs up or the process closes: ends its waits and streams. */
function callerSignal(api: A2aSurfaceApi, res: Response): AbortSignal {
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  return AbortSignal.any([gone.signal, api.lifecycle.closing]);
}

/**
 * Resolves the key and the agent of /a2a/{agent}/… into res.locals.caller.
 * Without a key, only a public card passes, and an unknown or private agent
 * gets the same 401 as any keyless call, so ids cannot be probed.
 */
function identify(api: A2aSurfaceApi): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const jsonRpc = req.path.startsWith(JSONRPC_PATH);
    const ref = req.params.agent as string;
    try {
      const projectId = await projectOf(api, req);
      if (projectId === null) return refuse(res, 401, 'The API key is unknown or revoked.', jsonRpc);
      if (projectId === undefined) {
        const agent = req.method === 'GET' && req.path === CARD_PATH ? await publicAgent(api, ref) : null;
        if (!agent) return refuse(res, 401, 'Send a project API key as "Authorization: Bearer <key>".', jsonRpc);
        res.locals.card = agent;
        return next();
      }
      let agent: Agent;
      try {
        agent = await api.agents.get(projectId, ref);
      } catch (error) {
        if (isPalaiError(error) && error.slug === 'agent-not-found') return refuse(res, 404, `No agent ${JSON.stringify(ref)} in this project.`, jsonRpc);
        throw error;
      }
      res.locals.card = agent;
      res.locals.caller = new Caller(projectId, agent, callerSignal(api, res));
      next();
    } catch (error) {
      const a2a = toA2aError(error, api.logger);
      if (a2a instanceof ServiceUnavailableError) return answerUnavailable(req, res, a2a);
      refuse(res, 500, a2a.message, jsonRpc);
    }
  };
}

/** The agent behind a public card: named by id, and marked public by its owner. */
async function publicAgent(api: A2aSurfaceApi, ref: string): Promise<Agent | null> {
  if (!ref.startsWith('agt_')) return null;
  const projectId = await api.agents.projectOf(ref);
  if (projectId === null) return null;
  const agent = await api.agents.get(projectId, ref);
  return hasPublicCard(agent) ? agent : null;
}

/** How long a client may keep a card before asking again (conditionally: ETag, Last-Modified). */
export const CARD_MAX_AGE_SECONDS = 300;

/**
 * The card of res.locals.card, through the SDK's handler (ETag, 304 on a
 * conditional GET, v0.3 translation). Cacheable for CARD_MAX_AGE_SECONDS, but
 * by shared caches only when it is public: a key's card is `private`. Its
 * URLs follow the request's Host, which is part of every cache key.
 */
function serveCard(req: Request, res: Response, next: NextFunction): void {
  const agent = res.locals.card as Agent;
  const card = cardFor(agent, surfaceUrl(req).slice(0, -CARD_PATH.length));
  const shared = res.locals.caller === undefined;
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name, value) => setHeader(name, name.toLowerCase() === 'cache-control' && !shared ? String(value).replace('public', 'private') : value);
  res.setHeader('Last-Modified', new Date(agent.updated_at * 1000).toUTCString());
  const handler = agentCardHandler({ agentCardProvider: async () => servedCard(card), cache: { maxAge: CARD_MAX_AGE_SECONDS }, legacyCompat: LEGACY });
  handler(req, res, next);
}

/** GET /a2a/?limit=&after=: the cards of the project's agents, in the order agents are listed. */
function listCards(api: A2aSurfaceApi): RequestHandler {
  return async (req: Request, res: Response) => {
    try {
      const projectId = await projectOf(api, req);
      if (!projectId) return refuse(res, 401, 'Send a project API key as "Authorization: Bearer <key>".', false);
      const limit = req.query.limit === undefined ? 20 : Number(req.query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) return refuse(res, 400, 'limit must be an integer from 1 to 100.', false);
      const after = typeof req.query.after === 'string' && req.query.after !== '' ? req.query.after : undefined;
      const page = await api.agents.list(projectId, { limit, after });
      const base = surfaceUrl(req);
      res.json({
        cards: page.data.map((agent) => AgentCard.toJSON(cardFor(agent, `${base}/${encodeURIComponent(agent.name)}`))),
        next_page_token: page.has_more ? page.last_id : null,
      });
    } catch (error) {
      const a2a = toA2aError(error, api.logger);
      if (a2a instanceof ServiceUnavailableError) return answerUnavailable(req, res, a2a);
      refuse(res, 500, a2a.message, false);
    }
  };
}

export function a2aRouter(api: A2aSurfaceApi): Router {
  const requestHandler = new KernelRequestHandler(api);
  const userBuilder = async (req: Request) => (req.res as Response).locals.caller as Caller;
  const limit = api.config.maxBodyBytes;

  const agentRoutes = express.Router({ mergeParams: true });
  agentRoutes.use(answerOutagesAs503);
  agentRoutes.use(CARD_PATH, serveCard);
  agentRoutes.use(JSONRPC_PATH, readBody(limit, 'jsonrpc'), jsonRpcHandler({ requestHandler, userBuilder, legacyCompat: LEGACY }));
  agentRoutes.use(REST_PATH, restWireAsSpecified, readBody(limit, 'rest'), restHandler({ requestHandler, userBuilder, legacyCompat: LEGACY }));
  agentRoutes.use((req: Request, res: Response) => refuse(res, 404, `No A2A route ${req.method} ${req.originalUrl}.`, false));

  const router = express.Router();
  router.get('/', listCards(api));
  router.use('/:agent', identify(api), agentRoutes);
  router.use((req: Request, res: Response) => refuse(res, 404, `No A2A route ${req.method} ${req.originalUrl}.`, false));
  return router;
}
