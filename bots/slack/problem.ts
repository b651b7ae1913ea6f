// Problems the Slack endpoints answer with (RFC 9457), in the kernel's one
// vocabulary. Slack reads only the status; the body is for whoever debugs.
import type { Response } from 'express';
import { OUTAGE_SLUGS, problemTypes, problemTypeUri, type ProblemSlug } from '../../core/errors/problem-types.js';

/**
 * Every problem's status, from the registry: Slack retries a 5xx and never a
 * 4xx, so a problem a retry can help is a 5xx (503 for Palai's own outage) and
 * any other a 4xx.
 */
export function slackStatusOf(slug: ProblemSlug): number {
  if (slug === 'unauthorized') return 401;
  if (slug === 'not-found') return 404;
  if (problemTypes[slug].retry !== 'later') return 400;
  return OUTAGE_SLUGS.has(slug) ? 503 : 500;
}

export function sendProblem(res: Response, slug: ProblemSlug, detail: string): void {
  const status = slackStatusOf(slug);
  res
    .status(status)
    .type('application/problem+json')
    .send(JSON.stringify({ type: problemTypeUri(slug), title: problemTypes[slug].title, status, detail }));
}
