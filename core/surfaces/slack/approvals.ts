// Decisions from Slack's buttons. Only the bot's approvers decide, and each
// prompt once: the decision and the prompt's record commit together under the
// prompt's row lock, so two clicks at once apply one decision.
import { PalaiError } from '../../errors/palai-error.js';
import { answerWaiting } from '../../responses/actions.js';
import type { Db } from '../../store/db.js';
import type { SlackBotConfig, SlackDecision, SlackDecisionOutcome, SlackPrompt } from './slack-bots-port.js';

interface PromptRow {
  response_id: string;
  call_id: string;
  channel: string;
  message_ts: string | null;
  summary: string;
  decision: string | null;
  decided_by: string | null;
  decided_at: Date | null;
}

const prompt = (row: PromptRow): SlackPrompt => ({
  responseId: row.response_id,
  callId: row.call_id,
  channel: row.channel,
  messageTs: row.message_ts,
  summary: row.summary,
});

export async function decideFromSlack(db: Db, bot: SlackBotConfig, decision: SlackDecision): Promise<SlackDecisionOutcome> {
  if (!bot.approvers.includes(decision.user)) return { kind: 'not_approver' };
  return db.transaction(async (tx): Promise<SlackDecisionOutcome> => {
    const { rows } = await tx.query<PromptRow>('SELECT * FROM slack_prompts WHERE response_id = $1 AND call_id = $2 AND bot_id = $3 FOR UPDATE', [
      decision.responseId,
      decision.callId,
      bot.id,
    ]);
    const row = rows[0];
    if (!row) return { kind: 'stale', detail: 'This approval request is not known to this bot.' };
    if (row.decision)
      return { kind: 'already', prompt: prompt(row), decision: row.decision, decidedBy: row.decided_by ?? '', decidedAt: row.decided_at ?? new Date() };
    try {
      const reason = `${decision.decision === 'approve' ? 'Approved' : 'Denied'} in Slack by ${decision.user}`;
      await answerWaiting(tx, bot.projectId, decision.responseId, [
        { kind: 'decision', call_id: decision.callId, decision: decision.decision, reason, pointer: '/call_id' },
      ]);
    } catch (error) {
      // The response moved on without this prompt: decided through the API, expired, canceled or deleted.
      if (error instanceof PalaiError && (error.slug === 'invalid-state' || error.slug === 'not-found' || error.slug === 'invalid-request'))
        return { kind: 'stale', detail: error.message };
      throw error;
    }
    const updated = await tx.query<{ decided_at: Date }>(
      'UPDATE slack_prompts SET decision = $3, decided_by = $4, decided_at = now() WHERE response_id = $1 AND call_id = $2 RETURNING decided_at',
      [decision.responseId, decision.callId, decision.decision, decision.user],
    );
    return { kind: 'decided', prompt: prompt(row), decidedAt: updated.rows[0].decided_at };
  });
}
