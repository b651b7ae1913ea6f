import type { NextFunction, Request, Response } from 'express';
import { authenticate } from '../../core/auth/api-keys.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { Db } from '../../core/store/db.js';

/** `Authorization: Bearer <key>` → res.locals.projectId. */
export function requireApiKey(db: Db) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.get('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw new PalaiError('unauthorized', 'Send an API key as "Authorization: Bearer <key>".');
    }
    const principal = await authenticate(db, match[1]);
    if (!principal) throw new PalaiError('unauthorized', 'The API key is unknown or revoked.');
    res.locals.projectId = principal.projectId;
    next();
  };
}
