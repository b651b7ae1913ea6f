// What the Slack surface's tests share: a project with an agent and a bot bound
// to it that posts to the Web API stand-in, and Slack's signed requests to the
// bot's events and interactivity endpoints.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestHub } from '../support/hub.js';
import type { FakeSlackApi } from './fake-slack-api.js';
import { slackHeaders } from './slack-signing.js';

export const SLACK_SETTINGS = { secretKey: 'slack-tests-secret-key-0123456789', egressAllowHosts: ['127.0.0.1'] };
export const SIGNING_SECRET = 'test-signing-secret-abcdef';
export const BOT_TOKEN = 'xoxb-test-bot-token-0001';

export async function eventually<T>(
  probe: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(intervalMs);
  }
}

export interface Bot {
  id: string;
  projectId: string;
  auth: { Authorization: string };
}

/** A fresh project with an agent (`agent` fields beyond the fake model) and a bot bound to it, posting to the stand-in. */
export async function freshBot(ctx: () => TestHub, slack: FakeSlackApi, agent: Record<string, unknown> = {}, bot: Record<string, unknown> = {}): Promise<Bot> {
  const key = await ctx().newProjectKey();
  const auth = { Authorization: `Bearer ${key}` };
  const projectId = (await ctx().hub.api.authenticate(key))!.projectId;
  const { script, ...rest } = agent;
  const created = await ctx()
    .http.post('/v1/agents')
    .set(auth)
    .send({ name: 'helper', model: { provider: 'fake', ...(script ? { script } : {}) }, ...rest });
  assert.equal(created.status, 201, created.text);
  const res = await ctx()
    .http.post('/v1/slack_bots')
    .set(auth)
    .send({ name: 'helper-bot', agent: 'helper', bot_token: BOT_TOKEN, signing_secret: SIGNING_SECRET, api_url: slack.url, ...bot });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, projectId, auth };
}

export function postEvent(ctx: () => TestHub, bot: Bot, payload: unknown, headers: Record<string, string> = {}) {
  const body = JSON.stringify(payload);
  return ctx()
    .http.post(`/slack/${bot.id}/events`)
    .set({ ...slackHeaders(SIGNING_SECRET, body), ...headers })
    .send(body);
}

/** A click as Slack posts it: a form whose `payload` is the block_actions JSON, signed. */
export function postInteraction(ctx: () => TestHub, bot: Bot, payload: unknown) {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return ctx()
    .http.post(`/slack/${bot.id}/interactions`)
    .set({ ...slackHeaders(SIGNING_SECRET, body), 'content-type': 'application/x-www-form-urlencoded' })
    .send(body);
}

export const responseCount = (ctx: () => TestHub, bot: Bot) => ctx().hub.api.responses.count(bot.projectId, {});

/** A user's message in a thread the bot answers in, without a mention (event `message`). */
export function threadMessage(options: { text: string; channel: string; threadTs: string; user?: string; ts?: string }) {
  const ts = options.ts ?? `${1_800_000_000 + Math.floor(Math.random() * 1e6)}.${String(Date.now() % 1e6).padStart(6, '0')}`;
  return {
    type: 'event_callback',
    team_id: 'T0TEAM',
    api_app_id: 'A0APP',
    event_id: `Ev${ts.replace('.', '')}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: 'T0TEAM', user_id: 'U0BOT', is_bot: true }],
    event: {
      type: 'message',
      channel_type: 'channel',
      user: options.user ?? 'U0HUMAN',
      text: options.text,
      ts,
      thread_ts: options.threadTs,
      channel: options.channel,
      team: 'T0TEAM',
    },
  };
}
