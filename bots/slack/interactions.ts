// Clicks on a prompt's buttons (interactivity `block_actions`). The decision is
// the kernel's (approvers only, each prompt once); the surface then rewrites the
// prompt with who decided and when, or tells anyone else, privately, why not.
// Slack calls after the decision are best effort: the decision stands either
// way, and a click on the request again rewrites it again.
import type { SlackSurfaceApi } from '../../core/surfaces/slack/slack-api.js';
import type { Logger } from '../../core/logger.js';
import type { SlackBotConfig, SlackDecisionOutcome } from '../../core/surfaces/slack/slack-bots-port.js';
import { APPROVE_ACTION, DENY_ACTION, decidedBlocks } from './blocks.js';

export type InteractionAction =
  | {
      kind: 'decide';
      responseId: string;
      callId: string;
      decision: 'approve' | 'deny';
      user: string;
      channel: string;
      threadTs: string | null;
      /** The message the button is in. */
      messageTs: string | null;
    }
  | { kind: 'ignore'; why: string };

const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);

export function interactionAction(payload: unknown): InteractionAction {
  if (typeof payload !== 'object' || payload === null) return { kind: 'ignore', why: 'not an object' };
  const body = payload as {
    type?: unknown;
    user?: { id?: unknown };
    channel?: { id?: unknown };
    container?: { channel_id?: unknown; thread_ts?: unknown; message_ts?: unknown };
    actions?: Array<{ action_id?: unknown; value?: unknown }>;
  };
  if (body.type !== 'block_actions') return { kind: 'ignore', why: `payload type ${String(body.type)}` };
  const action = body.actions?.[0];
  const decision = action?.action_id === APPROVE_ACTION ? 'approve' : action?.action_id === DENY_ACTION ? 'deny' : null;
  const user = text(body.user?.id);
  const channel = text(body.channel?.id) ?? text(body.container?.channel_id);
  if (!decision || !user || !channel) return { kind: 'ignore', why: 'not a decision' };
  let value: { response_id?: unknown; call_id?: unknown };
  try {
    value = JSON.parse(String(action?.value)) as typeof value;
  } catch {
    return { kind: 'ignore', why: 'the button value is not JSON' };
  }
  const responseId = text(value?.response_id);
  const callId = text(value?.call_id);
  if (!responseId || !callId) return { kind: 'ignore', why: 'the button names no call' };
  return {
    kind: 'decide',
    responseId,
    callId,
    decision,
    user,
    channel,
    threadTs: text(body.container?.thread_ts) ?? null,
    messageTs: text(body.container?.message_ts) ?? null,
  };
}

/**
 * Applies the click, then (without waiting: Slack wants its acknowledgement within three seconds)
 * tells the clicker why nothing changed, or rewrites the request with the decision.
 */
export async function answerInteraction(
  api: SlackSurfaceApi,
  bot: SlackBotConfig,
  action: Extract<InteractionAction, { kind: 'decide' }>,
  logger: Logger,
): Promise<void> {
  const outcome = await api.slackBots.decide(bot, { responseId: action.responseId, callId: action.callId, decision: action.decision, user: action.user });
  void afterDecision(api, bot, action, outcome).catch((error: unknown) => {
    logger.warn({ bot: bot.id, outcome: outcome.kind, err: (error as Error).message }, 'answering a Slack click in the thread failed');
  });
}

async function afterDecision(
  api: SlackSurfaceApi,
  bot: SlackBotConfig,
  action: Extract<InteractionAction, { kind: 'decide' }>,
  outcome: SlackDecisionOutcome,
): Promise<void> {
  const { slackWebClient } = await import('./web-client.js');
  const client = slackWebClient(api, bot);
  const tell = (line: string) =>
    client.chat.postEphemeral({ channel: action.channel, user: action.user, text: line, ...(action.threadTs ? { thread_ts: action.threadTs } : {}) });
  switch (outcome.kind) {
    case 'not_approver':
      await tell('Only the approvers of this bot can approve or deny its tool calls.');
      return;
    case 'stale':
      await tell(`Nothing to decide: ${outcome.detail}`);
      return;
    case 'decided':
    case 'already': {
      const decidedBy = outcome.kind === 'decided' ? action.user : outcome.decidedBy;
      const decision = outcome.kind === 'decided' ? action.decision : outcome.decision;
      // Clicked before Slack's answer to the post was saved: the click names the message.
      const ts = outcome.prompt.messageTs ?? action.messageTs;
      if (!ts) return;
      await client.chat.update({
        channel: outcome.prompt.channel,
        ts,
        ...decidedBlocks(outcome.prompt.summary, decision, decidedBy, outcome.decidedAt),
      });
    }
  }
}
