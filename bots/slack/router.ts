// The HTTP-mode Slack surface, mounted at /slack: Slack's Events API posts each
// bot's events to /slack/{bot}/events. Every request is checked against the
// bot's signing secret on its raw body before anything else; a user's message
// is admitted as a response (exactly once per event_id) before Slack gets its
// 200, so an acknowledged message is never lost, and Slack's retries run nothing twice.
import express, { Router, type Request, type Response } from 'express';
import type { KernelApi } from '../../core/api/index.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { eventAction } from './events.js';
import { sendProblem } from './problem.js';
import { isSignedBySlack } from './signature.js';

/** Slack's event payloads are small; this bounds what is read before the signature is checked. */
const MAX_BODY = '1mb';

export function slackRouter(api: KernelApi): Router {
  const logger = api.logger.child({ component: 'slack' });
  const router = Router();
  router.post('/:bot/events', express.raw({ type: () => true, limit: MAX_BODY }), async (req: Request, res: Response) => {
    const botId = String(req.params.bot);
    const bot = await api.slackBots.config(botId).catch((error: unknown) => {
      logger.warn({ err: error, bot: botId }, 'reading a Slack bot failed');
      return undefined;
    });
    if (bot === undefined) return sendProblem(res, 'store-unavailable', 'The bot could not be read; Slack will retry.');
    const rawBody = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    const signed = bot !== null && isSignedBySlack(bot.signingSecret, { rawBody, signature: req.get('x-slack-signature'), timestamp: req.get('x-slack-request-timestamp') });
    // An unknown bot and a bad signature get the same answer: the path reveals nothing.
    if (!bot || !signed) return sendProblem(res, 'unauthorized', 'The request is not signed by Slack with this bot\'s signing secret, or its timestamp is not within five minutes.');
    let payload: unknown;
    try {
      payload = JSON.parse(rawBody);
    } catch {
      return sendProblem(res, 'malformed-json', 'The event body is not JSON.');
    }
    const action = eventAction(payload);
    if (action.kind === 'challenge') return void res.json({ challenge: action.challenge });
    if (action.kind === 'ignore') return void res.status(200).end();
    try {
      const outcome = await api.slackBots.admit(bot, action.message);
      logger.debug({ bot: bot.id, outcome: outcome.kind, response: outcome.responseId, retry: req.get('x-slack-retry-num') ?? null }, 'slack event admitted');
      res.status(200).end();
    } catch (error) {
      // A message that can never be admitted (the agent is gone) is acknowledged: Slack's retries would not help.
      if (error instanceof PalaiError && error.slug !== 'store-unavailable' && error.slug !== 'store-busy' && error.slug !== 'internal') {
        logger.warn({ bot: bot.id, problem: error.slug, detail: error.message }, 'a Slack message was not admitted');
        return void res.status(200).end();
      }
      logger.error({ err: error, bot: bot.id }, 'admitting a Slack message failed');
      sendProblem(res, 'store-unavailable', 'The message could not be admitted now; Slack will retry.');
    }
  });
  router.use((req: Request, res: Response) => sendProblem(res, 'not-found', `No Slack route for ${req.method} ${req.originalUrl.split('?')[0]}.`));
  return router;
}
