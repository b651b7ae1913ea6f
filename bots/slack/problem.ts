// Problems the Slack endpoints answer with (RFC 9457), in the kernel's one
// vocabulary. Slack reads only the status; the body is for whoever debugs.
import type { Response } from 'express';
import { problemTypes, problemTypeUri, type ProblemSlug } from '../../core/errors/problem-types.js';

const STATUS: Partial<Record<ProblemSlug, number>> = { unauthorized: 401, 'not-found': 404, 'malformed-json': 400, 'store-unavailable': 503, internal: 500 };

export function sendProblem(res: Response, slug: ProblemSlug, detail: string): void {
  const status = STATUS[slug] ?? 500;
  res.status(status).type('application/problem+json').send(JSON.stringify({ type: problemTypeUri(slug), title: problemTypes[slug].title, status, detail }));
}
