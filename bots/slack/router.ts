// The HTTP-mode Slack surface, mounted at /slack: Slack's Events API posts each
// bot's events to /slack/{bot}/events and its button clicks to
// /slack/{bot}/interactions. Every request is checked against the bot's signing
// secret on its raw body before anything else; a user's message is admitted as
// a response (exactly once per message) before Slack gets its 200, so an
// acknowledged message is never lost, and Slack's retries run nothing twice.
import express, { Router, type Request, type Response } from 'express';
import type { SlackSurfaceApi } from '../../core/surfaces/slack/slack-api.js';
import type { SlackBotConfig } from '../../core/surfaces/slack/slack-bots-port.js';
import { dispatchEvent, dispatchInteraction, type DispatchOutcome } from './dispatch.js';
import { sendProblem } from './problem.js';
import { isSignedBySlack } from './signature.js';

/** Slack's payloads are small; this bounds what is read before the signature is checked. */
const MAX_BODY = '1mb';

type Parse = (rawBody: string) => unknown;
type Dispatch = (api: SlackSurfaceApi, bot: SlackBotConfig, payload: unknown, logger: SlackSurfaceApi['logger']) => Promise<DispatchOutcome>;

const parseJson: Parse = (raw) => JSON.parse(raw);
/** Interactivity posts a form whose `payload` field is the JSON. */
const parseForm: Parse = (raw) => JSON.parse(new URLSearchParams(raw).get('payload') ?? '');

export function slackRouter(api: SlackSurfaceApi): Router {
  const logger = api.logger.child({ component: 'slack' });
  const router = Router();
  const route = (parse: Parse, dispatch: Dispatch) => async (req: Request, res: Response) => {
    const botId = String(req.params.bot);
    const bot = await api.slackBots.config(botId).catch((error: unknown) => {
      logger.warn({ err: error, bot: botId }, 'reading a Slack bot failed');
      return undefined;
    });
    if (bot === undefined) return sendProblem(res, 'store-unavailable', 'The bot could not be read; Slack will retry.');
    const rawBody = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    const signed =
      bot !== null &&
      (await isSignedBySlack(bot.signingSecret, { rawBody, signature: req.get('x-slack-signature'), timestamp: req.get('x-slack-request-timestamp') }));
    // An unknown bot and a bad signature get the same answer: the path reveals nothing.
    if (!bot || !signed)
      return sendProblem(
        res,
        'unauthorized',
        "The request is not signed by Slack with this bot's signing secret, or its timestamp is not within five minutes.",
      );
    let payload: unknown;
    try {
      payload = parse(rawBody);
    } catch {
      return sendProblem(res, 'malformed-json', 'The body is not the JSON Slack sends.');
    }
    const outcome = await dispatch(api, bot, payload, logger);
    if (outcome.kind === 'retry') return sendProblem(res, 'store-unavailable', outcome.detail);
    if (outcome.body !== undefined) return void res.json(outcome.body);
    res.status(200).end();
  };
  const raw = express.raw({ type: () => true, limit: MAX_BODY });
  router.post('/:bot/events', raw, route(parseJson, dispatchEvent));
  router.post('/:bot/interactions', raw, route(parseForm, dispatchInteraction));
  router.use((req: Request, res: Response) => sendProblem(res, 'not-found', `No Slack route for ${req.method} ${req.originalUrl.split('?')[0]}.`));
  return router;
}
