// Binds handlers to the operations of the OpenAPI document: each route's path,
// method, authentication, body and query validation come from generated/, so a
// handler only ever sees a request that matches the document.
import express, { type Request, type Response, type Router } from 'express';
import { operations, type OperationDescriptor, type OperationId } from '../../generated/operations.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { Kernel } from '../../core/kernel.js';
import { requireApiKey } from './auth.js';
import { validateBody, validateQuery } from './validation.js';

export interface OperationContext {
  projectId: string;
  body: any;
  query: any;
  params: Record<string, string>;
}

export type OperationHandler = (req: Request, res: Response, ctx: OperationContext) => Promise<void> | void;
export type OperationHandlers = Partial<Record<OperationId, OperationHandler>>;

function requireJsonBody(req: Request): void {
  // No body at all is left to the schema check ("a JSON request body is required").
  if (req.is('application/json') === false) {
    const got = req.get('content-type');
    throw new PalaiError('unsupported-media-type', got ? `Content-Type ${got} is not accepted; send application/json.` : 'Send the body as application/json.');
  }
}

export function bindOperations(kernel: Kernel, handlers: OperationHandlers): Router {
  const router = express.Router();
  const apiKey = requireApiKey(kernel.db);
  const jsonBody = express.json({ limit: kernel.config.maxBodyBytes, strict: true, type: 'application/json' });
  const byPath = new Map<string, OperationDescriptor[]>();

  for (const op of operations) {
    const handler = handlers[op.operationId];
    if (!handler) throw new Error(`no handler for operation ${op.operationId}`);
    const chain = [];
    if (op.authenticated) chain.push(apiKey);
    if (op.bodySchema) chain.push((req: Request, _res: Response, next: () => void) => (requireJsonBody(req), next()), jsonBody);
    chain.push(async (req: Request, res: Response) => {
      const ctx: OperationContext = {
        projectId: res.locals.projectId,
        body: op.bodySchema ? validateBody(op.bodySchema, req.body) : undefined,
        query: op.querySchema ? validateQuery(op.querySchema, req.query as Record<string, unknown>) : {},
        params: req.params as Record<string, string>,
      };
      await handler(req, res, ctx);
    });
    router[op.method.toLowerCase() as 'get' | 'post' | 'delete'](op.expressPath, ...chain);
    byPath.set(op.expressPath, [...(byPath.get(op.expressPath) ?? []), op]);
  }

  for (const [path, ops] of byPath) {
    const allow = [...new Set(ops.flatMap((o) => (o.method === 'GET' ? ['GET', 'HEAD'] : [o.method])))].join(', ');
    router.all(path, () => {
      throw new PalaiError('method-not-allowed', `This resource allows ${allow}.`, { extensions: { allow } });
    });
  }
  return router;
}
