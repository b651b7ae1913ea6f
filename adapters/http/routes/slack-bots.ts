// /v1/slack_bots: the project's Slack bots. Tokens and the signing secret are
// write-only: an answer shows only the bot token's last four characters.
import type { KernelApi } from '../../../core/api/index.js';
import type { OperationHandlers } from '../operations.js';

export function slackBotHandlers({ slackBots }: KernelApi): OperationHandlers {
  return {
    createSlackBot: async (_req, res, { projectId, body, idempotency }) => {
      res.status(201).json(await slackBots.create(projectId, body, { idempotency }));
    },
    listSlackBots: async (_req, res, { projectId, query }) => {
      res.json(await slackBots.list(projectId, query));
    },
    getSlackBot: async (_req, res, { projectId, params }) => {
      res.json(await slackBots.get(projectId, params.slack_bot));
    },
    updateSlackBot: async (_req, res, { projectId, params, body }) => {
      res.json(await slackBots.update(projectId, params.slack_bot, body));
    },
    deleteSlackBot: async (_req, res, { projectId, params }) => {
      const id = await slackBots.delete(projectId, params.slack_bot);
      res.json({ id, object: 'slack_bot.deleted', deleted: true });
    },
    listSlackThreads: async (_req, res, { projectId, params, query }) => {
      res.json(await slackBots.threads(projectId, params.slack_bot, query));
    },
  };
}
