// The Slack surface in HTTP mode, as a specification, driven by requests signed
// as Slack signs them and answered through a local stand-in for Slack's Web API:
// a mention becomes one response whose answer streams into its thread; a reply
// in the thread, with or without a mention, continues the same session; Slack's
// retries and the two events a mention in a thread arrives as run nothing twice;
// unsigned, wrongly signed and stale requests are refused and create nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { describeEachStore } from '../support/hub.js';
import { assertProblem } from '../support/spec.js';
import { startFakeSlackApi, type FakeSlackApi } from './fake-slack-api.js';
import { BOT_TOKEN, eventually, freshBot, postEvent, responseCount, SIGNING_SECRET, SLACK_SETTINGS, threadMessage } from './slack-harness.js';
import { mention, slackHeaders } from './slack-signing.js';

let slack: FakeSlackApi;
before(async () => {
  slack = await startFakeSlackApi();
});
after(() => slack.close());

/** The thread's finished messages, once there are `count`. */
const finished = (channel: string, threadTs: string, count = 1) =>
  eventually(() => {
    const messages = slack.messages(channel, threadTs);
    return messages.length === count && messages.every((m) => !m.streaming) && messages;
  });

describeEachStore(
  'Slack events (HTTP mode)',
  (ctx) => {
    test('url_verification is answered with its challenge', async () => {
      const bot = await freshBot(ctx, slack);
      const res = await postEvent(ctx, bot, {
        type: 'url_verification',
        token: 'legacy',
        challenge: 'challenge-3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { challenge: 'challenge-3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    });

    test('a mention becomes one response whose answer streams into its thread; replies in the thread continue the same session', async () => {
      // One step per message: a thread is one conversation, and the script goes on through its turns.
      const bot = await freshBot(ctx, slack, { script: Array(3).fill({ text: 'Hello **there**, how can I help you today?', delay_ms: 300 }) });
      const first = mention({ text: 'hello   there', channel: 'C0FIRST' });
      const ack = await postEvent(ctx, bot, first);
      assert.equal(ack.status, 200, ack.text);
      // Admitted before the ack: the response exists already.
      assert.equal(await responseCount(ctx, bot), 1);
      const [answer] = await finished('C0FIRST', first.event.ts);
      assert.equal(answer.text, 'Hello **there**, how can I help you today?', 'Markdown goes to Slack as markdown_text, rendered by Slack');
      const calls = slack.callsIn('C0FIRST', first.event.ts);
      const methods = calls.map((c) => c.method);
      assert.equal(methods.filter((m) => m === 'chat.startStream').length, 1, methods.join(' '));
      const start = calls.find((c) => c.method === 'chat.startStream')!;
      // The answer takes about two seconds and text is written at most once a second: it streams in parts.
      if (start.args.markdown_text !== answer.text) assert.ok(methods.includes('chat.appendStream'), 'the rest streamed in with appendStream');
      assert.equal(methods.at(-1), 'chat.stopStream', methods.join(' '));
      assert.equal(methods[0], 'assistant.threads.setStatus', `the thinking status comes first: ${methods.join(' ')}`);
      assert.ok(String(answer.text).startsWith(String(start.args.markdown_text)));
      assert.equal(start.token, BOT_TOKEN);
      assert.equal(start.args.thread_ts, first.event.ts);
      assert.equal(start.args.recipient_user_id, 'U0HUMAN');
      assert.equal(start.args.recipient_team_id, 'T0TEAM');

      // A reply without a mention, in the bot's thread, continues it.
      const reply = threadMessage({ text: 'and again', channel: 'C0FIRST', threadTs: first.event.ts });
      assert.equal((await postEvent(ctx, bot, reply)).status, 200);
      // A mention in the thread comes as two events (app_mention and message): one response.
      const again = mention({ text: 'once more', channel: 'C0FIRST', threadTs: first.event.ts });
      assert.equal((await postEvent(ctx, bot, again)).status, 200);
      const asMessage = threadMessage({ text: '<@U0BOT> once more', channel: 'C0FIRST', threadTs: first.event.ts, ts: again.event.ts });
      assert.equal((await postEvent(ctx, bot, asMessage)).status, 200);
      const all = await finished('C0FIRST', first.event.ts, 3);
      assert.deepEqual(
        all.map((m) => m.text),
        Array(3).fill('Hello **there**, how can I help you today?'),
        'each message answered once, in its own message',
      );
      const { data: responses } = await ctx().hub.api.responses.list(bot.projectId, {}, { order: 'asc' });
      assert.equal(responses.length, 3, 'three messages, three responses');
      assert.ok(responses[0].session_id);
      assert.ok(
        responses.every((r) => r.session_id === responses[0].session_id),
        'the thread is one session',
      );

      const threads = await ctx().http.get(`/v1/slack_bots/${bot.id}/threads`).set(bot.auth);
      assert.equal(threads.status, 200, threads.text);
      assert.deepEqual(
        threads.body.data.map((t: Record<string, unknown>) => [t.team, t.channel, t.thread_ts, t.session_id]),
        [['T0TEAM', 'C0FIRST', first.event.ts, responses[0].session_id]],
      );
    });

    test('a message without a mention in a thread the bot is not in, and a direct message, are told apart', async () => {
      const bot = await freshBot(ctx, slack);
      const stray = threadMessage({ text: 'not for the bot', channel: 'C0STRAY', threadTs: '1700000000.000001' });
      assert.equal((await postEvent(ctx, bot, stray)).status, 200);
      assert.equal(await responseCount(ctx, bot), 0);
      const direct = threadMessage({ text: 'hi bot', channel: 'D0DIRECT', threadTs: '1700000000.000002' });
      Object.assign(direct.event, { channel_type: 'im', thread_ts: undefined });
      assert.equal((await postEvent(ctx, bot, direct)).status, 200);
      assert.equal(await responseCount(ctx, bot), 1);
      const [answer] = await finished('D0DIRECT', direct.event.ts);
      assert.equal(answer.text, 'hi bot');
    });

    test('a message with text no store can hold is acknowledged and answered in its thread with the reason; nothing runs, and a retry changes nothing', async () => {
      const bot = await freshBot(ctx, slack);
      for (const text of ['before\u0000after', 'half a pair \ud83d here']) {
        const event = mention({ text, channel: 'C0NUL' });
        assert.equal((await postEvent(ctx, bot, event)).status, 200, 'acknowledged: Slack must not retry it');
        const [told] = await eventually(() => {
          const posted = slack.callsIn('C0NUL', event.event.ts).filter((c) => c.method === 'chat.postMessage');
          return posted.length > 0 && posted;
        });
        assert.match(String(told.args.text), /^I could not take this message: Text in the request contains (U\+0000 \(NUL\)|a lone UTF-16 surrogate)/);
        assert.equal((await postEvent(ctx, bot, event, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' })).status, 200);
      }
      assert.equal(await responseCount(ctx, bot), 0, 'no response was admitted');
    });

    test('a retried event (same event_id) starts no second response', async () => {
      const bot = await freshBot(ctx, slack, { script: [{ text: 'only once' }] });
      const event = mention({ text: 'do it', channel: 'C0RETRY' });
      assert.equal((await postEvent(ctx, bot, event)).status, 200);
      assert.equal((await postEvent(ctx, bot, event, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' })).status, 200);
      assert.equal((await postEvent(ctx, bot, event, { 'x-slack-retry-num': '2', 'x-slack-retry-reason': 'http_timeout' })).status, 200);
      const [answer] = await finished('C0RETRY', event.event.ts);
      assert.equal(answer.text, 'only once');
      assert.equal(await responseCount(ctx, bot), 1);
    });

    test('a bad signature, a stale timestamp, no signature and an unknown bot are 401, and nothing is created', async () => {
      const bot = await freshBot(ctx, slack);
      const body = JSON.stringify(mention({ text: 'let me in', channel: 'C0BAD' }));
      const wrong = await ctx().http.post(`/slack/${bot.id}/events`).set(slackHeaders('not-the-signing-secret', body)).send(body);
      assertProblem(wrong, 401, 'unauthorized');
      const stale = await ctx()
        .http.post(`/slack/${bot.id}/events`)
        .set(slackHeaders(SIGNING_SECRET, body, Math.floor(Date.now() / 1000) - 6 * 60))
        .send(body);
      assertProblem(stale, 401, 'unauthorized');
      const future = await ctx()
        .http.post(`/slack/${bot.id}/events`)
        .set(slackHeaders(SIGNING_SECRET, body, Math.floor(Date.now() / 1000) + 6 * 60))
        .send(body);
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

    test("the bot's own messages and other events start nothing", async () => {
      const bot = await freshBot(ctx, slack);
      const own = mention({ text: 'from a bot', channel: 'C0OWN' });
      (own.event as Record<string, unknown>).bot_id = 'B0BOT';
      assert.equal((await postEvent(ctx, bot, own)).status, 200);
      assert.equal(
        (await postEvent(ctx, bot, { type: 'event_callback', team_id: 'T0TEAM', event_id: 'Ev0REACT', event: { type: 'reaction_added', user: 'U0HUMAN' } }))
          .status,
        200,
      );
      const edited = threadMessage({ text: 'edited', channel: 'C0OWN', threadTs: own.event.ts });
      Object.assign(edited.event, { subtype: 'message_changed' });
      assert.equal((await postEvent(ctx, bot, edited)).status, 200);
      const byBotUser = mention({ text: 'me myself', channel: 'C0OWN' });
      Object.assign(byBotUser.event, { user: 'U0BOT' });
      assert.equal((await postEvent(ctx, bot, byBotUser)).status, 200);
      assert.equal(await responseCount(ctx, bot), 0);
    });
  },
  SLACK_SETTINGS,
);
