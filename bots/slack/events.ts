// What an Events API payload asks of the bot: Slack's URL check, a user's
// message to answer (a mention, a direct message, or a message in a thread,
// which concerns the bot only if it answers in that thread), or nothing
// (everything else the app is subscribed to, edits, and the bot's own
// messages, which must never start a response).
import type { SlackMessage } from '../../core/surfaces/slack/slack-bots-port.js';

export type SlackEventAction =
  | { kind: 'challenge'; challenge: string }
  | { kind: 'message'; message: SlackMessage }
  | { kind: 'thread-message'; message: SlackMessage }
  | { kind: 'ignore'; why: string };

interface EventCallback {
  type?: unknown;
  challenge?: unknown;
  team_id?: unknown;
  event_id?: unknown;
  authorizations?: Array<{ user_id?: unknown }>;
  event?: Record<string, unknown>;
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** Removes mentions of the bot (`<@U123>` or `<@U123|name>`); without its user id, a leading mention. */
export function stripMention(raw: string, botUserIds: readonly string[]): string {
  const stripped = botUserIds.length
    ? botUserIds.reduce((t, id) => t.replace(new RegExp(`<@${id}(\\|[^>]*)?>`, 'g'), ''), raw)
    : raw.replace(/^\s*<@[A-Z0-9]+(\|[^>]*)?>/, '');
  return stripped.replace(/\s+/g, ' ').trim();
}

export function eventAction(payload: unknown): SlackEventAction {
  if (typeof payload !== 'object' || payload === null) return { kind: 'ignore', why: 'not an object' };
  const body = payload as EventCallback;
  if (body.type === 'url_verification' && typeof body.challenge === 'string') return { kind: 'challenge', challenge: body.challenge };
  if (body.type !== 'event_callback' || !body.event) return { kind: 'ignore', why: `payload type ${String(body.type)}` };
  const event = body.event;
  const isMention = event.type === 'app_mention';
  const isMessage = event.type === 'message' && event.subtype === undefined;
  const isDirect = isMessage && event.channel_type === 'im';
  const inThread = isMessage && !isDirect && typeof event.thread_ts === 'string' && event.thread_ts !== event.ts;
  if (!isMention && !isDirect && !inThread) return { kind: 'ignore', why: `event type ${String(event.type)}` };
  if (event.bot_id !== undefined) return { kind: 'ignore', why: 'a bot wrote it' };
  const eventId = text(body.event_id);
  const team = text(event.team) ?? text(body.team_id);
  const channel = text(event.channel);
  const ts = text(event.ts);
  const user = text(event.user);
  if (!eventId || !team || !channel || !ts || !user) return { kind: 'ignore', why: 'fields missing' };
  const botUserIds = (body.authorizations ?? []).map((a) => text(a.user_id)).filter((id): id is string => id !== undefined && /^[UW][A-Z0-9]+$/.test(id));
  if (botUserIds.includes(user)) return { kind: 'ignore', why: 'the bot wrote it' };
  const message: SlackMessage = {
    eventId,
    team,
    channel,
    ts,
    threadTs: text(event.thread_ts) ?? ts,
    user,
    text: stripMention(text(event.text) ?? '', botUserIds),
  };
  return { kind: isMention || isDirect ? 'message' : 'thread-message', message };
}
