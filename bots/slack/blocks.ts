// The messages a bot posts besides the answer: an approval request with its
// Approve and Deny buttons, and the same request once decided. Text from the
// run (a tool's name and arguments) is escaped as Slack's mrkdwn requires.
import type { webApi } from '@slack/bolt';
import type { ResponseState } from '../../core/api/index.js';

type PendingCall = ResponseState['pending_calls'][number];
type Block = webApi.KnownBlock;

export const APPROVE_ACTION = 'palai_approve';
export const DENY_ACTION = 'palai_deny';

/** Slack's section text holds 3,000 characters; the arguments get what the rest leaves. */
const MAX_ARGUMENTS = 2_400;

/** `&`, `<` and `>` are control characters in Slack's text: escaped, a run's text cannot mention or link anyone. */
export const escapeMrkdwn = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function prettyArguments(json: string): string {
  let text = json;
  try {
    text = JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    // Shown as given.
  }
  return text.length > MAX_ARGUMENTS ? `${text.slice(0, MAX_ARGUMENTS - 1)}…` : text;
}

/** The request's words: the tool, its risk and its arguments. */
export function approvalSummary(call: PendingCall): string {
  const code = escapeMrkdwn(prettyArguments(call.arguments)).replace(/```/g, '`\u200b``');
  return `*Approval needed* to run \`${escapeMrkdwn(call.name)}\` (risk: *${call.risk}*)\n\`\`\`${code}\`\`\``;
}

/** The button's value: which response and call the click decides. */
export const decisionValue = (responseId: string, callId: string) => JSON.stringify({ response_id: responseId, call_id: callId });

export function approvalBlocks(responseId: string, call: PendingCall, summary: string): Block[] {
  const value = decisionValue(responseId, call.call_id);
  return [
    { type: 'section', text: { type: 'mrkdwn', text: summary } },
    {
      type: 'actions',
      block_id: 'palai_decision',
      elements: [
        { type: 'button', action_id: APPROVE_ACTION, style: 'primary', text: { type: 'plain_text', text: 'Approve' }, value },
        { type: 'button', action_id: DENY_ACTION, style: 'danger', text: { type: 'plain_text', text: 'Deny' }, value },
      ],
    },
  ];
}

/** The request once decided: the buttons replaced by who decided and when (shown in each reader's time zone). */
export function decidedBlocks(summary: string, decision: string, user: string, at: Date): { text: string; blocks: Block[] } {
  const verb = decision === 'approve' ? 'Approved' : 'Denied';
  const unix = Math.floor(at.getTime() / 1000);
  const line = `${decision === 'approve' ? ':white_check_mark:' : ':no_entry_sign:'} ${verb} by <@${user}> <!date^${unix}^{date_short_pretty} at {time}|${at.toISOString()}>`;
  return {
    text: `${verb} by <@${user}>`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: summary } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: line }] },
    ],
  };
}
