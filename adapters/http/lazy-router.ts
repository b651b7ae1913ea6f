// A surface's router (/mcp, /a2a), loaded with its protocol SDK on the first
// request to its path, not when the process starts: a hub that is only ever
// asked REST questions never loads the MCP or A2A SDKs. Concurrent first
// requests wait for the one import; an import that fails is answered as any
// unexpected error is (the app's error handler: logged, a 500 problem) and is
// tried again on the next request.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function lazyRouter(load: () => Promise<RequestHandler>): RequestHandler {
  let router: RequestHandler | null = null;
  let loading: Promise<RequestHandler> | null = null;
  // Express 5 passes a rejection of the returned promise to next(): to the app's error handler.
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (!router) {
      loading ??= load().finally(() => {
        loading = null;
      });
      router = await loading;
    }
    await router(req, res, next);
  };
}
