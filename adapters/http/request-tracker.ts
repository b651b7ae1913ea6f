// Requests in flight, so a shutdown can let them finish before it hands running
// work over. Event streams are left out: they may follow a response for ever,
// and the shutdown ends them itself with a hint where to resume.
import type { NextFunction, Request, Response } from 'express';

const STREAM = Symbol('palai.stream');

/** Marks `res` as an event stream: a shutdown does not wait for it. */
export function markStream(res: Response): void {
  (res.locals as Record<symbol, boolean>)[STREAM] = true;
}

const isStream = (res: Response): boolean => (res.locals as Record<symbol, boolean>)[STREAM] === true;

export class RequestTracker {
  private readonly open = new Set<Response>();

  middleware() {
    return (_req: Request, res: Response, next: NextFunction): void => {
      this.open.add(res);
      res.once('close', () => this.open.delete(res));
      next();
    };
  }

  /** Requests still being answered, streams not counted. */
  get busy(): number {
    let count = 0;
    for (const res of this.open) if (!isStream(res)) count++;
    return count;
  }

  /** Open event streams. */
  get streams(): number {
    return this.open.size - this.busy;
  }
}
