// The REST surface: express 5, every route bound from the OpenAPI document,
// every failure an RFC 9457 problem. The operator routes (/metrics, /healthz,
// /readyz) can be split off onto their own port (createAdminApp), so anonymous
// callers of the public port never see the hub's figures.
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { OperationDescriptor, OperationId } from '../../generated/operations.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { HttpMount, KernelApi, SurfaceOperations } from '../../core/api/index.js';
import { bindOperations, surfaceHandlers } from './operations.js';
import { handleError } from './problem.js';
import { agentHandlers } from './routes/agents.js';
import { healthHandlers } from './routes/health.js';
import { modelConnectionHandlers } from './routes/model-connections.js';
import { secretHandlers } from './routes/secrets.js';
import { outboxHandlers } from './routes/outbox.js';
import { modelHandlers } from './routes/models.js';
import { chatHandlers } from './routes/chat-completions.js';
import { conversationHandlers } from './routes/conversations.js';
import { responseHandlers } from './routes/responses.js';
import { sessionHandlers } from './routes/sessions.js';
import { RequestTracker } from './request-tracker.js';

const OPERATOR_OPERATIONS: ReadonlySet<OperationId> = new Set(['getHealth', 'getReadiness', 'getMetrics']);
const PROBES: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

function accessLog(api: KernelApi) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      api.logger.debug({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms) }, 'http');
    });
    next();
  };
}

/** Once the process drains, a request on a kept-alive connection is sent elsewhere; probes still answer. */
function refuseWhileDraining(api: KernelApi) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!api.lifecycle.draining.aborted || PROBES.has(req.path)) return next();
    res.setHeader('Connection', 'close');
    throw new PalaiError('shutting-down', 'This process is shutting down; send the request again (to another process).');
  };
}

function finish(app: Express, api: KernelApi): Express {
  app.use((req: Request) => {
    throw new PalaiError('not-found', `No route for ${req.method} ${req.path}.`);
  });
  app.use(handleError(api.logger));
  return app;
}

function baseApp(api: KernelApi): Express {
  const app = express();
  app.disable('x-powered-by');
  // No ETag on API answers: it hashes every body, and no client of this API sends If-None-Match (the A2A card sets its own).
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(accessLog(api));
  return app;
}

export interface HttpAppOptions {
  /** Serve /metrics here too. False when an operator port serves it. Default true. */
  metrics?: boolean;
  /** Counts requests in flight, so a shutdown can wait for them. */
  tracker?: RequestTracker;
  /** Other surfaces served on the same port (A2A, MCP, …), each under its own path prefix. */
  mounts?: readonly HttpMount[];
  /** The REST operations other surfaces own (their resources), bound beside the kernel's. */
  operations?: SurfaceOperations;
}

export function createHttpApp(api: KernelApi, options: HttpAppOptions = {}): Express {
  const app = baseApp(api);
  if (options.tracker) app.use(options.tracker.middleware());
  app.use(refuseWhileDraining(api));
  // Before the REST routes, so a surface's paths never reach the REST fallback; its errors are its own protocol's.
  for (const mount of options.mounts ?? []) app.use(mount.path, mount.handler);
  const include = (op: OperationDescriptor) => options.metrics !== false || op.operationId !== 'getMetrics';
  app.use(
    bindOperations(
      api,
      {
        ...healthHandlers(api),
        ...agentHandlers(api),
        ...sessionHandlers(api),
        ...responseHandlers(api),
        ...modelConnectionHandlers(api),
        ...secretHandlers(api),
        ...outboxHandlers(api),
        ...modelHandlers(api),
        ...chatHandlers(api),
        ...conversationHandlers(api),
        ...surfaceHandlers(options.operations ?? {}),
      },
      include,
    ),
  );
  return finish(app, api);
}

/** The operator port: /metrics, /healthz and /readyz only. */
export function createAdminApp(api: KernelApi): Express {
  const app = baseApp(api);
  app.use(bindOperations(api, healthHandlers(api), (op) => OPERATOR_OPERATIONS.has(op.operationId)));
  return finish(app, api);
}
