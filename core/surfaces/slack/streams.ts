// The leases and saved progress of Slack replies (see SlackReplyJob). A
// streamer claims replies that have journal events not yet in their thread,
// one process per reply at a time; each Slack call is followed by a save that
// also renews the lease, and fails when the lease was lost, so two processes
// never write into one message.
import type { Db, Queryable } from '../../store/db.js';
import type { SlackReplyJob, SlackReplyProgress, SlackReplySave } from './slack-bots-port.js';

interface ReplyRow {
  response_id: string;
  project_id: string;
  bot_id: string;
  team: string;
  channel: string;
  thread_ts: string;
  user_id: string | null;
  progress: SlackReplyProgress;
  projected_sequence: number;
}

const job = (row: ReplyRow): SlackReplyJob => ({
  responseId: row.response_id,
  projectId: row.project_id,
  botId: row.bot_id,
  team: row.team,
  channel: row.channel,
  threadTs: row.thread_ts,
  userId: row.user_id,
  progress: row.progress,
  projectedSequence: row.projected_sequence,
});

/** Up to `limit` unfinished replies with events past their projection and no live lease, leased to `owner`. */
export async function claimSlackReplies(db: Db, owner: string, limit: number, leaseMs: number): Promise<SlackReplyJob[]> {
  const { rows } = await db.query<ReplyRow>(
    `UPDATE slack_replies SET lease_owner = $1, lease_until = now() + $3 * interval '1 millisecond'
     WHERE response_id IN (
       SELECT sr.response_id FROM slack_replies sr
       WHERE sr.finished_at IS NULL AND (sr.lease_until IS NULL OR sr.lease_until < now())
         AND EXISTS (SELECT 1 FROM response_journal e WHERE e.response_id = sr.response_id AND e.last_sequence > sr.projected_sequence)
       ORDER BY sr.created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING response_id, project_id, bot_id, team, channel, thread_ts, user_id, progress, projected_sequence`,
    [owner, limit, leaseMs],
  );
  return rows.map(job);
}

/** Saves progress (and the prompts posted) and renews or gives back the lease; false when `owner` no longer holds it. */
export async function saveSlackReply(db: Db, responseId: string, owner: string, leaseMs: number, save: SlackReplySave): Promise<boolean> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ project_id: string; bot_id: string }>(
      `UPDATE slack_replies SET progress = coalesce($3::jsonb, progress), projected_sequence = coalesce($4, projected_sequence),
         lease_owner = CASE WHEN $5 THEN NULL ELSE lease_owner END,
         lease_until = CASE WHEN $5 THEN NULL ELSE now() + $6 * interval '1 millisecond' END,
         finished_at = CASE WHEN $7 THEN now() ELSE NULL END, last_error = coalesce($8, last_error)
       WHERE response_id = $1 AND lease_owner = $2 RETURNING project_id, bot_id`,
      [
        responseId,
        owner,
        save.progress ? JSON.stringify(save.progress) : null,
        save.projectedSequence ?? null,
        Boolean(save.release || save.finished),
        leaseMs,
        Boolean(save.finished),
        save.error ?? null,
      ],
    );
    const row = rows[0];
    if (!row) return false;
    for (const prompt of save.prompts ?? []) await insertPrompt(tx, row.project_id, row.bot_id, prompt);
    return true;
  });
}

async function insertPrompt(tx: Queryable, projectId: string, botId: string, prompt: NonNullable<SlackReplySave['prompts']>[number]): Promise<void> {
  await tx.query(
    `INSERT INTO slack_prompts (response_id, call_id, project_id, bot_id, channel, message_ts, summary) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (response_id, call_id) DO UPDATE SET channel = excluded.channel, summary = excluded.summary,
       message_ts = coalesce(excluded.message_ts, slack_prompts.message_ts)`,
    [prompt.responseId, prompt.callId, projectId, botId, prompt.channel, prompt.messageTs, prompt.summary],
  );
}
