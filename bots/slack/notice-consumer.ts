// The Slack surface's `slack_notice` outbox consumer: a notice the kernel
// wrote for a session that is a bot's thread (an objective's notification) is
// one chat.postMessage in that thread, by that bot. A bot gone, of another
// project, or a thread Slack refuses for good ends the delivery dead; a rate
// limit or a failed call is retried by the outbox.
import type { DeliveryResult, OutboxConsumer, OutboxDelivery } from '../../core/outbox/outbox-port.js';
import type { SessionNoticePayload } from '../../core/outbox/session-notice-port.js';
import type { SlackSurfaceApi } from '../../core/surfaces/slack/slack-api.js';
import { noticeThread, SLACK_NOTICE_CONSUMER } from '../../core/surfaces/slack/thread-notice-port.js';
import { SlackCallError } from './slack-call-error.js';

export function slackNoticeConsumer(api: SlackSurfaceApi): OutboxConsumer {
  return {
    name: SLACK_NOTICE_CONSUMER,
    // One thread's notices go out one at a time, so they read in the order they were written.
    perTargetConcurrency: 1,
    async deliver(delivery: OutboxDelivery, signal: AbortSignal): Promise<DeliveryResult> {
      const thread = noticeThread(delivery.target);
      if (!thread) return { kind: 'dead', error: `${delivery.target} names no Slack thread.` };
      const bot = await api.slackBots.config(thread.botId);
      if (!bot || bot.projectId !== delivery.projectId) return { kind: 'dead', error: `The Slack bot ${thread.botId} is gone.` };
      const { text } = delivery.payload as SessionNoticePayload;
      // Loaded here: the Web API client is not needed until a notice is posted.
      const [{ callSlack }, { slackWebClient }] = await Promise.all([import('./slack-calls.js'), import('./web-client.js')]);
      try {
        // Rate limits are waited out inside the attempt, never past its lease (signal).
        await callSlack(
          'chat.postMessage',
          () => slackWebClient(api, bot).chat.postMessage({ channel: thread.channel, thread_ts: thread.threadTs, text }),
          signal,
        );
        return { kind: 'delivered' };
      } catch (error) {
        if (error instanceof SlackCallError)
          return error.kind === 'transient' ? { kind: 'retry', error: error.message } : { kind: 'dead', error: error.message };
        throw error;
      }
    },
  };
}
