// Where the SDK's HTTP+JSON binding (1.0 paths) departs from the A2A 1.0 spec,
// its answers are set right on their way out: §11.1 says responses are
// `application/json` (the SDK writes `application/a2a+json`), and the table of
// §5.4 gives three errors their own HTTP status (the SDK answers 400 or 500).
// The body, its google.rpc status and the error's reason stay the SDK's, so
// its client reads them as before. 0.3's paths (/v1/…) are left as 0.3 has them.
import type { NextFunction, Request, Response } from 'express';

/** HTTP status by the ErrorInfo reason, as §5.4's table has it where the SDK differs. */
const SPEC_STATUS: Readonly<Record<string, number>> = {
  CONTENT_TYPE_NOT_SUPPORTED: 415,
  TASK_NOT_CANCELABLE: 409,
  INVALID_AGENT_RESPONSE: 502,
};

function specStatusOf(body: unknown): number | undefined {
  const details = (body as { error?: { details?: unknown } } | null)?.error?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details as { reason?: unknown }[]) {
    if (typeof detail?.reason === 'string' && detail.reason in SPEC_STATUS) return SPEC_STATUS[detail.reason];
  }
  return undefined;
}

export function restWireAsSpecified(req: Request, res: Response, next: NextFunction): void {
  if (req.path.startsWith('/v1/')) return next();
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name, value) =>
    setHeader(name, name.toLowerCase() === 'content-type' ? String(value).replace(/^application\/a2a\+json/i, 'application/json') : value);
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    const status = res.statusCode >= 400 ? specStatusOf(body) : undefined;
    if (status !== undefined) {
      res.status(status);
      (body as { error: { code: number } }).error.code = status;
    }
    return json(body);
  };
  next();
}
