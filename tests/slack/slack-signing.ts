// Signs a request body as Slack does (v0 HMAC-SHA256 over `v0:{timestamp}:{body}`),
// so the tests drive the events endpoint exactly as Slack would.
import { createHmac } from 'node:crypto';

export function slackHeaders(signingSecret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  const signature = 'v0=' + createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex');
  return { 'content-type': 'application/json', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature };
}

let eventCounter = 0;

/** An event_callback carrying an app_mention of the bot user U0BOT. */
export function mention(options: { text: string; ts?: string; threadTs?: string; eventId?: string; channel?: string }) {
  const ts = options.ts ?? `${1_700_000_000 + ++eventCounter}.000200`;
  return {
    type: 'event_callback',
    team_id: 'T0TEAM',
    api_app_id: 'A0APP',
    event_id: options.eventId ?? `Ev${Date.now()}${++eventCounter}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: 'T0TEAM', user_id: 'U0BOT', is_bot: true }],
    event: {
      type: 'app_mention',
      user: 'U0HUMAN',
      text: `<@U0BOT> ${options.text}`,
      ts,
      ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
      channel: options.channel ?? 'C0CHAN',
      team: 'T0TEAM',
      event_ts: ts,
    },
  };
}
