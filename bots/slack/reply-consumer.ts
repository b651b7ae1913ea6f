// The outbox consumer that posts answers in threads (`slack_reply`): each
// delivery announces a status of a response a Slack message started; the text
// is built from the journal event, so every attempt posts the same words, and
// goes to the message's thread with chat.postMessage. A 429 is retried after
// Slack's Retry-After; what is stored as the error is one short line, never a
// token (the Web API client's errors name the method, not the token).
import { webApi } from '@slack/bolt';
import type { KernelApi } from '../../core/api/index.js';
import type { DeliveryResult, OutboxConsumer, OutboxDelivery, StatusAnnouncement } from '../../core/outbox/outbox-port.js';
import { storedError } from '../../core/outbox/outbox-port.js';
import { SLACK_REPLY_CONSUMER } from '../../core/slack-bots/slack-bots-port.js';
import { slackWebClient } from './web-client.js';

/** Slack's answers that no retry can change: the bot cannot post there. */
const PERMANENT = new Set(['channel_not_found', 'not_in_channel', 'is_archived', 'invalid_auth', 'account_inactive', 'token_revoked', 'msg_too_long', 'no_text']);

export function slackReplyConsumer(api: KernelApi): OutboxConsumer {
  return {
    name: SLACK_REPLY_CONSUMER,
    // Slack rate-limits per workspace and method: a few posts at a time per bot.
    perTargetConcurrency: 4,
    async deliver(delivery: OutboxDelivery): Promise<DeliveryResult> {
      const announcement = delivery.payload as unknown as StatusAnnouncement;
      const reply = await api.slackBots.reply(delivery.projectId, announcement);
      if (!reply) return { kind: 'delivered' }; // nothing to post (the response was deleted, or a status with no words)
      const bot = await api.slackBots.config(reply.botId);
      if (!bot || bot.projectId !== delivery.projectId) return { kind: 'dead', error: `Slack bot ${reply.botId} was deleted; the answer has nowhere to go` };
      try {
        await slackWebClient(api, bot).chat.postMessage({ channel: reply.channel, thread_ts: reply.threadTs, text: reply.text });
        return { kind: 'delivered' };
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === webApi.ErrorCode.RateLimitedError) {
          const seconds = (error as webApi.WebAPIRateLimitedError).retryAfter;
          return { kind: 'retry', error: `Slack rate-limited chat.postMessage (retry after ${seconds} s)`, retryAfterMs: seconds * 1000 };
        }
        if (code === webApi.ErrorCode.PlatformError) {
          const slackError = String((error as webApi.WebAPIPlatformError).data?.error ?? 'unknown_error');
          const line = `Slack refused chat.postMessage: ${slackError}`;
          return PERMANENT.has(slackError) ? { kind: 'dead', error: line } : { kind: 'retry', error: line };
        }
        return { kind: 'retry', error: `posting to Slack failed: ${storedError(error)}` };
      }
    },
  };
}
