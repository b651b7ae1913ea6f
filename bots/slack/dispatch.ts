// What the bot does with a verified payload from Slack, whichever way it came:
// an Events API request or interactivity request in HTTP mode, or a Socket
// Mode envelope. The transport verifies (a signature, or the app token's own
// connection) and acknowledges according to the outcome.
import type { SlackSurfaceApi } from '../../core/surfaces/slack/slack-api.js';
import { retryOf, type PalaiError } from '../../core/errors/palai-error.js';
import type { SlackBotConfig, SlackMessage } from '../../core/surfaces/slack/slack-bots-port.js';
import type { Logger } from '../../core/logger.js';
import { eventAction } from './events.js';
import { interactionAction, answerInteraction } from './interactions.js';
import { slackAdmissions } from './streamer.js';

/** `ack`: acknowledge (with `body`, Slack's url_verification answer); `retry`: do not, so Slack sends it again. */
export type DispatchOutcome = { kind: 'ack'; body?: unknown } | { kind: 'retry'; detail: string };

/** Slack's redelivery (or the next click) may succeed only where the registry says a retry can help. */
const retryable = (error: unknown) => retryOf(error) === 'later';

/** Messages lately told why they were not taken: a mention in a thread arrives as two events, and the thread hears it once. */
const told = new Map<string, number>();
const TOLD_FOR_MS = 10 * 60 * 1000;
const TOLD_AT_MOST = 1000;

/** Whether this message was told already (in this process); remembers it if not. */
function toldBefore(bot: SlackBotConfig, message: SlackMessage): boolean {
  const key = `${bot.id}:${message.channel}:${message.ts}`;
  const now = Date.now();
  for (const [earlier, at] of told) if (now - at > TOLD_FOR_MS || told.size > TOLD_AT_MOST) told.delete(earlier);
  if (told.has(key)) return true;
  told.set(key, now);
  return false;
}

/** Posts why a message was not taken into its thread; best effort, after the acknowledgement is decided. */
function tellThread(api: SlackSurfaceApi, bot: SlackBotConfig, message: SlackMessage, reason: string, logger: Logger): void {
  if (toldBefore(bot, message)) return;
  void (async () => {
    // Loaded here: the Web API client is not needed until a message is answered.
    const { slackWebClient } = await import('./web-client.js');
    await slackWebClient(api, bot).chat.postMessage({
      channel: message.channel,
      thread_ts: message.threadTs,
      text: `I could not take this message: ${reason}`,
    });
  })().catch((error: unknown) => logger.warn({ err: error, bot: bot.id }, 'telling a Slack thread why its message was not taken failed'));
}

/** An Events API payload (`event_callback`, `url_verification`): a user's message is admitted before this resolves. */
export async function dispatchEvent(api: SlackSurfaceApi, bot: SlackBotConfig, payload: unknown, logger: Logger): Promise<DispatchOutcome> {
  const action = eventAction(payload);
  if (action.kind === 'challenge') return { kind: 'ack', body: { challenge: action.challenge } };
  if (action.kind === 'ignore') return { kind: 'ack' };
  try {
    // A message without a mention concerns the bot only in a thread it answers in.
    if (action.kind === 'thread-message' && !(await api.slackBots.knowsThread(bot.id, action.message))) return { kind: 'ack' };
    const outcome = await api.slackBots.admit(bot, action.message);
    logger.debug({ bot: bot.id, outcome: outcome.kind, response: outcome.responseId }, 'slack message admitted');
    if (outcome.kind !== 'duplicate') slackAdmissions.dispatchEvent(new Event('admitted'));
    return { kind: 'ack' };
  } catch (error) {
    // A message that can never be admitted (the agent is gone, text the store cannot hold) is acknowledged,
    // since Slack's retries would not help, and its thread is told why.
    if (!retryable(error)) {
      logger.warn({ bot: bot.id, problem: (error as PalaiError).slug, detail: (error as PalaiError).message }, 'a Slack message was not admitted');
      tellThread(api, bot, action.message, (error as PalaiError).message, logger);
      return { kind: 'ack' };
    }
    logger.error({ err: error, bot: bot.id }, 'admitting a Slack message failed');
    return { kind: 'retry', detail: 'The message could not be admitted now; Slack will retry.' };
  }
}

/** An interactivity payload (`block_actions`): a click on a prompt's Approve or Deny button. */
export async function dispatchInteraction(api: SlackSurfaceApi, bot: SlackBotConfig, payload: unknown, logger: Logger): Promise<DispatchOutcome> {
  const action = interactionAction(payload);
  if (action.kind === 'ignore') return { kind: 'ack' };
  try {
    await answerInteraction(api, bot, action, logger);
    return { kind: 'ack' };
  } catch (error) {
    if (!retryable(error)) return { kind: 'ack' };
    logger.error({ err: error, bot: bot.id }, 'deciding from Slack failed');
    return { kind: 'retry', detail: 'The decision could not be recorded now; click again.' };
  }
}
