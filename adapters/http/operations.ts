// Binds handlers to the operations of the OpenAPI document: each route's path,
// method, authentication, body and query validation come from generated/, so a
// handler only ever sees a request that matches the document, in text the store
// can hold.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { operations, type OperationDescriptor, type OperationId } from '../../generated/operations.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { KernelApi, RecalledKey, SurfaceOperations } from '../../core/api/index.js';
import { checkRecalledKeyOnError, requireApiKey } from './auth.js';
import { assertStorablePathParams, validateBody, validateQuery } from './validation.js';
import type { IdempotencyClaim, InboxIdentity, InboxRecord } from '../../core/idempotency/inbox-port.js';

export interface OperationContext {
  projectId: string;
  body: any;
  query: any;
  params: Record<string, string>;
  /** Set when the request carries an Idempotency-Key: pass it to the core operation. */
  idempotency?: IdempotencyClaim;
  /** Set when this request repeats an earlier one: answer for that resource, change nothing. */
  replay?: { resourceId: string };
  /** The caller's key as recalled, not yet checked (see RECALLING_KEY): pass it to the kernel's first statement. */
  key?: RecalledKey;
}

/**
 * The operations whose key the kernel checks in their first statement instead
 * of one of its own: creating a response, the hot path, whose first statement
 * reads the agent. Any other operation looks its key up first.
 */
const RECALLING_KEY: ReadonlySet<OperationId> = new Set(['createResponse']);

export type OperationHandler = (req: Request, res: Response, ctx: OperationContext) => Promise<void> | void;
export type OperationHandlers = Partial<Record<OperationId, OperationHandler>>;

/** Another surface's REST operations as handlers: its answer's status and JSON body. */
export function surfaceHandlers(surfaceOperations: SurfaceOperations): OperationHandlers {
  const handlers: OperationHandlers = {};
  for (const [id, operation] of Object.entries(surfaceOperations)) {
    handlers[id as OperationId] = async (_req, res, ctx) => {
      // A caller who hangs up aborts what the operation waits for.
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      const answer = await operation!({ ...ctx, signal: gone.signal });
      res.status(answer.status ?? 200).json(answer.body);
    };
  }
  return handlers;
}

/** An empty request without a Content-Type: what a client sends for an optional body it leaves out. */
const sendsNothing = (req: Request): boolean =>
  req.get('content-type') === undefined && Number(req.get('content-length') ?? 0) === 0 && !req.get('transfer-encoding');

function requireJsonBody(req: Request, optional: boolean): void {
  if (optional && sendsNothing(req)) return;
  // No body at all is left to the schema check ("a JSON request body is required").
  if (req.is('application/json') === false) {
    const got = req.get('content-type');
    throw new PalaiError('unsupported-media-type', got ? `Content-Type ${got} is not accepted; send application/json.` : 'Send the body as application/json.');
  }
}

/**
 * Runs a POST carrying an Idempotency-Key at most once, through the kernel's
 * inbox: a repeat of a finished or still-running request answers for the same
 * resource (or with the recorded answer); a different request with the same key
 * is refused. Only the key's syntax and the replay header are HTTP's own.
 */
async function handleIdempotently(
  api: KernelApi,
  op: OperationDescriptor,
  handler: OperationHandler,
  req: Request,
  res: Response,
  ctx: OperationContext,
  key: string,
): Promise<void> {
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new PalaiError('invalid-request', 'Idempotency-Key must be 1 to 255 visible ASCII characters.');
  }
  const identity: InboxIdentity = {
    projectId: ctx.projectId,
    source: 'http',
    key,
    operation: op.operationId,
    fingerprint: api.inbox.fingerprint(op.operationId, ctx.params, ctx.body),
  };
  const work = async (claim: IdempotencyClaim) => {
    await handler(req, res, { ...ctx, idempotency: claim });
  };
  const replay = async (record: InboxRecord) => {
    res.setHeader('Idempotent-Replayed', 'true');
    if (record.answer) return void res.status(record.answer.status).json(record.answer.body);
    if (record.resourceId === null) throw new Error(`idempotency record of ${record.operation} names no resource to answer for`);
    await handler(req, res, { ...ctx, replay: { resourceId: record.resourceId } });
  };
  await api.inbox.once(identity, work, replay);
}

/** Binds the operations `include` accepts (default: all); each must have a handler. */
export function bindOperations(api: KernelApi, handlers: OperationHandlers, include: (op: OperationDescriptor) => boolean = () => true): Router {
  const router = express.Router();
  const apiKey = requireApiKey(api);
  const recallingKey = requireApiKey(api, { recall: true });
  const checkKeyOnError = checkRecalledKeyOnError(api);
  const jsonBody = express.json({ limit: api.config.maxBodyBytes, strict: true, type: 'application/json' });
  const byPath = new Map<string, OperationDescriptor[]>();
  /** Each path without parameters, with a router of its own operations. */
  const direct = new Map<string, Router>();
  const ownRouter = (path: string): Router => {
    let own = direct.get(path);
    if (!own) direct.set(path, (own = express.Router()));
    return own;
  };

  for (const op of operations.filter(include)) {
    const handler = handlers[op.operationId];
    if (!handler) throw new Error(`no handler for operation ${op.operationId}`);
    const chain = [];
    const recalls = op.authenticated && RECALLING_KEY.has(op.operationId);
    if (op.authenticated) chain.push(recalls ? recallingKey : apiKey);
    if (op.bodySchema) chain.push((req: Request, _res: Response, next: () => void) => (requireJsonBody(req, !op.bodyRequired), next()), jsonBody);
    chain.push(async (req: Request, res: Response) => {
      assertStorablePathParams(req.params as Record<string, string>);
      const ctx: OperationContext = {
        projectId: res.locals.projectId,
        // An optional body left out (no bytes at all) is no body; anything sent is checked.
        body: op.bodySchema && (op.bodyRequired || req.body !== undefined) ? validateBody(op.bodySchema, req.body) : undefined,
        query: op.querySchema ? validateQuery(op.querySchema, req.query as Record<string, unknown>) : {},
        params: req.params as Record<string, string>,
        key: res.locals.key as RecalledKey | undefined,
      };
      const key = op.method === 'POST' && op.authenticated ? req.get('idempotency-key') : undefined;
      if (key === undefined) return handler(req, res, ctx);
      // The inbox writes first: the key is checked before it.
      if (ctx.key) await api.checkKey(ctx.key);
      await handleIdempotently(api, op, handler, req, res, ctx, key);
    });
    if (recalls) chain.push(checkKeyOnError);
    const method = op.method.toLowerCase() as 'get' | 'post' | 'delete';
    router[method](op.expressPath, ...chain);
    if (!op.expressPath.includes(':')) ownRouter(op.expressPath)[method](op.expressPath, ...chain);
    byPath.set(op.expressPath, [...(byPath.get(op.expressPath) ?? []), op]);
  }

  for (const [path, ops] of byPath) {
    const allow = [...new Set(ops.flatMap((o) => (o.method === 'GET' ? ['GET', 'HEAD'] : [o.method])))].join(', ');
    const refuse = () => {
      throw new PalaiError('method-not-allowed', `This resource allows ${allow}.`, { extensions: { allow } });
    };
    router.all(path, refuse);
    direct.get(path)?.all(path, refuse);
  }
  // A path without parameters, written as the document writes it, is found by a lookup instead of a walk
  // past every route bound before it (POST /v1/responses is the 97th); unless a parameterised path could
  // match it too, where the order of the walk decides. Anything else (other case, a trailing slash) walks.
  const parameterised = [...byPath.keys()].filter((path) => path.includes(':')).map(pathPattern);
  for (const path of [...direct.keys()]) if (parameterised.some((pattern) => pattern.test(path))) direct.delete(path);
  const front = express.Router();
  front.use((req: Request, res: Response, next: NextFunction) => {
    const own = direct.get(req.path);
    if (own) own(req, res, next);
    else next();
  });
  front.use(router);
  return front;
}

/** What an express path of `:params` (a segment each) matches: case aside, and an optional trailing slash. */
function pathPattern(expressPath: string): RegExp {
  const segments = expressPath.split('/').map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}/?$`, 'i');
}
