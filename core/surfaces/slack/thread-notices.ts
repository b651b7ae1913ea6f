// A Slack thread's session, as the kernel's session notices see it
// (core/outbox/session-notice-port.ts): each bot's thread whose conversation
// the session is becomes one target of the Slack surface's notice consumer.
import type { SessionNotices } from '../../outbox/session-notice-port.js';
import type { Queryable } from '../../store/db.js';
import { noticeTarget, SLACK_NOTICE_CONSUMER } from './thread-notice-port.js';

export const slackThreadNotices: SessionNotices = {
  consumer: SLACK_NOTICE_CONSUMER,
  async targetsOf(q: Queryable, projectId: string, sessionId: string): Promise<string[]> {
    const { rows } = await q.query<{ bot_id: string; team: string; channel: string; thread_ts: string }>(
      'SELECT bot_id, team, channel, thread_ts FROM slack_threads WHERE project_id = $1 AND session_id = $2 ORDER BY bot_id, team, channel, thread_ts',
      [projectId, sessionId],
    );
    return rows.map((r) => noticeTarget({ botId: r.bot_id, team: r.team, channel: r.channel, threadTs: r.thread_ts }));
  },
};
