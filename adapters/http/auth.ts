import type { NextFunction, Request, Response } from 'express';
import type { KernelApi, RecalledKey } from '../../core/api/index.js';
import { PalaiError } from '../../core/errors/palai-error.js';

/**
 * `Authorization: Bearer <key>` → res.locals.projectId. With `recall`, a key
 * this process has authenticated before is taken at its project for now
 * (res.locals.key): the kernel checks it in the request's first statement.
 */
export function requireApiKey(api: Pick<KernelApi, 'authenticate' | 'recallKey'>, options: { recall?: boolean } = {}) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.get('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw new PalaiError('unauthorized', 'Send an API key as "Authorization: Bearer <key>".');
    }
    const recalled = options.recall ? api.recallKey(match[1]) : null;
    if (recalled) {
      res.locals.projectId = recalled.projectId;
      res.locals.key = recalled;
      return next();
    }
    const principal = await api.authenticate(match[1]);
    if (!principal) throw new PalaiError('unauthorized', 'The API key is unknown or revoked.');
    res.locals.projectId = principal.projectId;
    next();
  };
}

/**
 * After a route that recalls keys: a request refused before the kernel checked
 * its key (a body that does not parse, a field the schema refuses) is refused
 * as unauthorized instead when the key no longer holds, as a key looked up
 * first would have been.
 */
export function checkRecalledKeyOnError(api: Pick<KernelApi, 'checkKey'>) {
  return async (error: unknown, _req: Request, res: Response, next: NextFunction): Promise<void> => {
    const key = res.locals.key as RecalledKey | undefined;
    if (key && !key.checked && !res.headersSent) {
      try {
        await api.checkKey(key);
      } catch (refusal) {
        return next(refusal);
      }
    }
    next(error);
  };
}
