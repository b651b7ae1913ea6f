// Where a notice for a Slack thread's session goes: the `slack_notice` outbox
// consumer (the Slack surface's), and its targets, each a bot's thread whose
// conversation the session is, written `<bot id>/<team>:<channel>:<thread ts>`
// (a thread's id after its bot's), so the surface posts a notice there looking
// up nothing but the bot. thread-notices.ts finds a session's targets.
export const SLACK_NOTICE_CONSUMER = 'slack_notice';

export interface NoticeThread {
  botId: string;
  team: string;
  channel: string;
  threadTs: string;
}

export const noticeTarget = (t: NoticeThread): string => `${t.botId}/${t.team}:${t.channel}:${t.threadTs}`;

/** The thread a target names, or null for one not in that form. */
export function noticeThread(target: string): NoticeThread | null {
  const m = /^([^/]+)\/([^:]+):([^:]+):([0-9]+\.[0-9]+)$/.exec(target);
  return m ? { botId: m[1], team: m[2], channel: m[3], threadTs: m[4] } : null;
}
