// The REST surface: express 5, every route bound from the OpenAPI document,
// every failure an RFC 9457 problem.
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { Kernel } from '../../core/kernel.js';
import { bindOperations } from './operations.js';
import { handleError } from './problem.js';
import { agentHandlers } from './routes/agents.js';
import { healthHandlers } from './routes/health.js';
import { modelConnectionHandlers } from './routes/model-connections.js';
import { responseHandlers } from './routes/responses.js';
import { sessionHandlers } from './routes/sessions.js';

function accessLog(kernel: Kernel) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      kernel.logger.debug({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms) }, 'http');
    });
    next();
  };
}

export function createHttpApp(kernel: Kernel): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(accessLog(kernel));
  app.use(
    bindOperations(kernel, {
      ...healthHandlers(kernel),
      ...agentHandlers(kernel),
      ...sessionHandlers(kernel),
      ...responseHandlers(kernel),
      ...modelConnectionHandlers(kernel),
    }),
  );
  app.use((req: Request) => {
    throw new PalaiError('not-found', `No route for ${req.method} ${req.path}.`);
  });
  app.use(handleError(kernel.logger));
  return app;
}
