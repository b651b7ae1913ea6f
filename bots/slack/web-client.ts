// The Slack Web API client for one bot: its token, its api_url (Slack's own by
// default, or a Slack-compatible server), every call through the egress guard.
// Rate limits are not waited out here: a 429 rejects at once, and the outbox
// retries the delivery after the Retry-After Slack named.
// @slack/web-api is the client Bolt itself uses; imported alone, the answers
// are posted without loading the rest of Bolt.
import * as webApi from '@slack/web-api';
import type { SlackSurfaceApi } from '../../core/surfaces/slack/slack-api.js';
import type { SlackBotConfig } from '../../core/surfaces/slack/slack-bots-port.js';

const CALL_TIMEOUT_MS = 15_000;

/** How every Web API client of a bot calls Slack: the posting client here, and Socket Mode's own. */
export function slackClientOptions(api: SlackSurfaceApi, bot: SlackBotConfig): webApi.WebClientOptions {
  return {
    slackApiUrl: bot.apiUrl,
    fetch: api.egress as unknown as webApi.FetchFunction,
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    timeout: CALL_TIMEOUT_MS,
    // The method name must never replace the bot's api_url with another host.
    allowAbsoluteUrls: false,
  };
}

export function slackWebClient(api: SlackSurfaceApi, bot: SlackBotConfig): webApi.WebClient {
  return new webApi.WebClient(bot.botToken, slackClientOptions(api, bot));
}
