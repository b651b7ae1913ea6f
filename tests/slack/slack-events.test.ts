// The Slack surface in HTTP mode, as a specification, driven by requests signed
// as Slack signs them and answered through a local stand-in for Slack's Web API:
// a mention becomes one response whose answer is posted in its thread; a reply
// in the thread continues the same session; Slack's retries run nothing twice;
// unsigned, wrongly signed and stale requests are refused and create nothing;
// a failure is one readable line in the thread;
// a 429 from the Web API is waited out and the answer still posted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeEachStore, type TestHub } from '../support/hub.js';
import { assertProblem } from '../support/spec.js';
import { startFakeSlackApi, type FakeSlackApi, type SlackCall } from './fake-slack-api.js';
import { mention, slackHeaders } from './slack-signing.js';

const SETTINGS = { secretKey: 'slack-tests-secret-key-0123456789', egressAllowHosts: ['127.0.0.1'] };
const SIGNING_SECRET = 'test-signing-secret-abcdef';
const BOT_TOKEN = 'xoxb-test-bot-token-0001';

let slack: FakeSlackApi;
before(async () => {
  slack = await startFakeSlackApi();
});
after(() => slack.close());

async function eventually<T>(probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(100);
  }
}

interface Bot {
  id: string;
  projectId: string;
  auth: { Authorization: string };
}

/** A fresh project with an agent and a bot bound to it, posting to the stand-in. */
async function freshBot(ctx: () => TestHub, script?: unknown[]): Promise<Bot> {
  const key = await ctx().newProjectKey();
  const auth = { Authorization: `Bearer ${key}` };
  const projectId = (await ctx().hub.api.authenticate(key))!.projectId;
  const agent = await ctx().http.post('/v1/agents').set(auth).send({ name: 'helper', model: { provider: 'fake', ...(script ? { script } : {}) } });
  assert.equal(agent.status, 201, agent.text);
  const bot = await ctx().http.post('/v1/slack_bots').set(auth).send({ name: 'helper-bot', agent: 'helper', bot_token: BOT_TOKEN, signing_secret: SIGNING_SECRET, api_url: slack.url });
  assert.equal(bot.status, 201, bot.text);
  return { id: bot.body.id, projectId, auth };
}

function postEvent(ctx: () => TestHub, bot: Bot, payload: unknown, headers: Record<string, string> = {}) {
  const body = JSON.stringify(payload);
  return ctx().http.post(`/slack/${bot.id}/events`).set({ ...slackHeaders(SIGNING_SECRET, body), ...headers }).send(body);
}

const postsIn = (channel: string, threadTs: string): SlackCall[] =>
  slack.calls.filter((c) => c.method === 'chat.postMessage' && c.status === 200 && c.args.channel === channel && c.args.thread_ts === threadTs);

const responseCount = (ctx: () => TestHub, bot: Bot) => ctx().hub.api.responses.count(bot.projectId, {});

describeEachStore(
  'Slack events (HTTP mode)',
  (ctx) => {
    test('url_verification is answered with its challenge', async () => {
      const bot = await freshBot(ctx);
      const res = await postEvent(ctx, bot, { type: 'url_verification', token: 'legacy', challenge: 'challenge-3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { challenge: 'challenge-3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    });

    test('a mention becomes one response, answered in its thread; a reply in the thread continues the same session', async () => {
      const bot = await freshBot(ctx);
      const first = mention({ text: 'hello   there', channel: 'C0FIRST' });
      const ack = await postEvent(ctx, bot, first);
      assert.equal(ack.status, 200, ack.text);
      // Admitted before the ack: the response exists already.
      assert.equal(await responseCount(ctx, bot), 1);
      const [post] = await eventually(() => postsIn('C0FIRST', first.event.ts).length > 0 && postsIn('C0FIRST', first.event.ts));
      assert.equal(post.args.text, 'hello there', 'the echo model answers the text without the mention');
      assert.equal(post.token, BOT_TOKEN);

      const reply = mention({ text: 'and again', channel: 'C0FIRST', threadTs: first.event.ts });
      assert.equal((await postEvent(ctx, bot, reply)).status, 200);
      await eventually(() => postsIn('C0FIRST', first.event.ts).length === 2);
      const { data: responses } = await ctx().hub.api.responses.list(bot.projectId, {}, { order: 'asc' });
      assert.equal(responses.length, 2);
      assert.ok(responses[0].session_id);
      assert.equal(responses[1].session_id, responses[0].session_id, 'the thread is one session');

      const threads = await ctx().http.get(`/v1/slack_bots/${bot.id}/threads`).set(bot.auth);
      assert.equal(threads.status, 200, threads.text);
      assert.deepEqual(
        threads.body.data.map((t: Record<string, unknown>) => [t.team, t.channel, t.thread_ts, t.session_id]),
        [['T0TEAM', 'C0FIRST', first.event.ts, responses[0].session_id]],
      );
    });

    test('a retried event (same event_id) starts no second response', async () => {
      const bot = await freshBot(ctx, [{ text: 'only once' }]);
      const event = mention({ text: 'do it', channel: 'C0RETRY' });
      assert.equal((await postEvent(ctx, bot, event)).status, 200);
      assert.equal((await postEvent(ctx, bot, event, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' })).status, 200);
      assert.equal((await postEvent(ctx, bot, event, { 'x-slack-retry-num': '2', 'x-slack-retry-reason': 'http_timeout' })).status, 200);
      const [post] = await eventually(() => postsIn('C0RETRY', event.event.ts).length > 0 && postsIn('C0RETRY', event.event.ts));
      assert.equal(post.args.text, 'only once');
      assert.equal(await responseCount(ctx, bot), 1);
    });

    test('a bad signature, a stale timestamp, no signature and an unknown bot are 401, and nothing is created', async () => {
      const bot = await freshBot(ctx);
      const body = JSON.stringify(mention({ text: 'let me in', channel: 'C0BAD' }));
      const wrong = await ctx().http.post(`/slack/${bot.id}/events`).set(slackHeaders('not-the-signing-secret', body)).send(body);
      assertProblem(wrong, 401, 'unauthorized');
      const stale = await ctx().http.post(`/slack/${bot.id}/events`).set(slackHeaders(SIGNING_SECRET, body, Math.floor(Date.now() / 1000) - 6 * 60)).send(body);
      assertProblem(stale, 401, 'unauthorized');
      const future = await ctx().http.post(`/slack/${bot.id}/events`).set(slackHeaders(SIGNING_SECRET, body, Math.floor(Date.now() / 1000) + 6 * 60)).send(body);
      assertProblem(future, 401, 'unauthorized');
      const unsigned = await ctx().http.post(`/slack/${bot.id}/events`).set('content-type', 'application/json').send(body);
      assertProblem(unsigned, 401, 'unauthorized');
      const tampered = await ctx().http.post(`/slack/${bot.id}/events`).set(slackHeaders(SIGNING_SECRET, body)).send(body.replace('let me in', 'let me in!'));
      assertProblem(tampered, 401, 'unauthorized');
      const unknown = await ctx().http.post('/slack/sbot_unknown/events').set(slackHeaders(SIGNING_SECRET, body)).send(body);
      assertProblem(unknown, 401, 'unauthorized');
      for (const res of [wrong, stale, future, unsigned, tampered, unknown]) assert.ok(!res.text.includes(SIGNING_SECRET));
      assert.equal(await responseCount(ctx, bot), 0);
      const threads = await ctx().http.get(`/v1/slack_bots/${bot.id}/threads`).set(bot.auth);
      assert.deepEqual(threads.body.data, []);
    });

    test('a 429 from the Web API is retried after Retry-After, and the answer posted once', async () => {
      const bot = await freshBot(ctx, [{ text: 'after the limit' }]);
      slack.rateLimitNext('chat.postMessage', 1);
      const event = mention({ text: 'busy day', channel: 'C0LIMIT' });
      assert.equal((await postEvent(ctx, bot, event)).status, 200);
      const [post] = await eventually(() => postsIn('C0LIMIT', event.event.ts).length > 0 && postsIn('C0LIMIT', event.event.ts));
      assert.equal(post.args.text, 'after the limit');
      const limited = slack.calls.filter((c) => c.method === 'chat.postMessage' && c.status === 429 && c.args.thread_ts === event.event.ts);
      assert.equal(limited.length, 1, 'the first attempt was rate-limited');
      assert.equal(postsIn('C0LIMIT', event.event.ts).length, 1);
    });

    test('a failed response reaches the thread as one short readable line', async () => {
      const bot = await freshBot(ctx, [{ error: { status: 400, message: 'the provider refused' } }]);
      const event = mention({ text: 'break please', channel: 'C0FAIL' });
      assert.equal((await postEvent(ctx, bot, event)).status, 200);
      const [post] = await eventually(() => postsIn('C0FAIL', event.event.ts).length > 0 && postsIn('C0FAIL', event.event.ts));
      const text = String(post.args.text);
      assert.match(text, /^Sorry, I could not answer: .*the provider refused/);
      assert.ok(!text.includes('\n') && !/\bat .*\.[jt]s:\d+/.test(text), 'no stack trace');
      assert.ok(!text.includes(BOT_TOKEN) && !text.includes(SIGNING_SECRET));
    });

    test("the bot's own messages and other events start nothing", async () => {
      const bot = await freshBot(ctx);
      const own = mention({ text: 'from a bot', channel: 'C0OWN' });
      (own.event as Record<string, unknown>).bot_id = 'B0BOT';
      assert.equal((await postEvent(ctx, bot, own)).status, 200);
      assert.equal((await postEvent(ctx, bot, { type: 'event_callback', team_id: 'T0TEAM', event_id: 'Ev0REACT', event: { type: 'reaction_added', user: 'U0HUMAN' } })).status, 200);
      assert.equal(await responseCount(ctx, bot), 0);
    });
  },
  SETTINGS,
);
