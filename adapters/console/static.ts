// Serves the console's built files under /console with a strict
// Content-Security-Policy: everything comes from this origin, nothing runs
// inline, and the page cannot be framed. Hashed assets are cached for good;
// index.html is revalidated, so a new build is picked up at the next load.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { PalaiError } from '../../core/errors/palai-error.js';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  next();
}

/** The router for /console; `dir` null (not built) answers a problem saying how to build it. */
export function consoleRouter(dir: string | null): Router {
  const router = express.Router();
  router.use(securityHeaders);
  // Only reads: anything else on /console is not a console request.
  router.use((req, _res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    throw new PalaiError('method-not-allowed', 'The console serves files only.', { extensions: { allow: 'GET, HEAD' } });
  });
  if (!dir) {
    router.use(() => {
      throw new PalaiError('not-found', 'The console is not built here: run `npm run build:console` (npm ci does it), or set PALAI_CONSOLE=false.');
    });
    return router;
  }
  // /console → /console/, so the page's relative asset URLs resolve under it.
  router.get('/', (req, res, next) => (req.originalUrl.split('?')[0].endsWith('/') ? next() : res.redirect(301, `${req.baseUrl}/`)));
  router.use('/assets', express.static(`${dir}/assets`, { immutable: true, maxAge: '365d', index: false, fallthrough: true, redirect: false }));
  router.use(
    express.static(dir, {
      index: ['index.html'],
      maxAge: 0,
      fallthrough: true,
      redirect: false,
      setHeaders: (res) => res.setHeader('Cache-Control', 'no-cache'),
    }),
  );
  router.use((req: Request) => {
    throw new PalaiError('not-found', `The console has no file ${req.path}.`);
  });
  return router;
}
