import type { NextFunction, Request, Response } from 'express';
import type { KernelApi } from '../../core/api/index.js';
import { PalaiError } from '../../core/errors/palai-error.js';

/** `Authorization: Bearer <key>` → res.locals.projectId. */
export function requireApiKey(api: Pick<KernelApi, 'authenticate'>) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.get('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw new PalaiError('unauthorized', 'Send an API key as "Authorization: Bearer <key>".');
    }
    const principal = await api.authenticate(match[1]);
    if (!principal) throw new PalaiError('unauthorized', 'The API key is unknown or revoked.');
    res.locals.projectId = principal.projectId;
    next();
  };
}
