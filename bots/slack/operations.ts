// /v1/slack_bots: the project's Slack bots. Tokens and the signing secret are
// write-only: an answer shows only the bot token's last four characters.
import type { SurfaceOperations } from '../../core/api/surface.js';
import type { SlackApi } from '../../core/surfaces/slack/slack-api.js';

export function slackBotOperations({ slackBots }: SlackApi): SurfaceOperations {
  return {
    createSlackBot: async ({ projectId, body, idempotency }) => ({ status: 201, body: await slackBots.create(projectId, body, { idempotency }) }),
    listSlackBots: async ({ projectId, query }) => ({ body: await slackBots.list(projectId, query) }),
    getSlackBot: async ({ projectId, params }) => ({ body: await slackBots.get(projectId, params.slack_bot) }),
    updateSlackBot: async ({ projectId, params, body }) => ({ body: await slackBots.update(projectId, params.slack_bot, body) }),
    deleteSlackBot: async ({ projectId, params }) => {
      const id = await slackBots.delete(projectId, params.slack_bot);
      return { body: { id, object: 'slack_bot.deleted', deleted: true } };
    },
    listSlackThreads: async ({ projectId, params, query }) => ({ body: await slackBots.threads(projectId, params.slack_bot, query) }),
  };
}
