// How answers reach a thread: streamed with Slack's streaming methods, or, where
// they are refused (a Slack-compatible server without them), posted and edited
// in one message; Slack's 429s waited out; long answers split within Slack's
// limits; a failure told in one readable line, with no stack trace or secret.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { describeEachStore } from '../support/hub.js';
import { startFakeSlackApi, type FakeSlackApi } from './fake-slack-api.js';
import { BOT_TOKEN, eventually, freshBot, postEvent, SIGNING_SECRET, SLACK_SETTINGS } from './slack-harness.js';
import { mention } from './slack-signing.js';

let slack: FakeSlackApi;
before(async () => {
  slack = await startFakeSlackApi();
});
after(() => slack.close());

const settled = (channel: string, threadTs: string, count = 1) =>
  eventually(() => {
    const messages = slack.messages(channel, threadTs);
    return messages.length >= count && messages.every((m) => !m.streaming) && messages;
  });

describeEachStore(
  'Slack replies',
  (ctx) => {
    test('where streaming is refused, the answer is posted and then edited, in one message', async () => {
      slack.refuse('chat.startStream', 'unknown_method');
      try {
        const text = 'one two three four five six seven eight nine ten';
        const bot = await freshBot(ctx, slack, { script: [{ text, delay_ms: 250 }] });
        const event = mention({ text: 'go', channel: 'C0EDIT' });
        assert.equal((await postEvent(ctx, bot, event)).status, 200);
        const messages = await eventually(() => {
          const found = slack.messages('C0EDIT', event.event.ts);
          return found.length === 1 && found[0].text === text && found;
        });
        const posts = slack.callsIn('C0EDIT', event.event.ts).filter((c) => c.method === 'chat.postMessage');
        assert.equal(posts.length, 1, 'one message, not one per chunk');
        const first = String(posts[0].args.markdown_text);
        assert.ok(text.startsWith(first), 'the message starts with the first part of the answer');
        // The answer takes seconds; the first part is posted as soon as it is there, the rest edited in.
        if (first !== text) assert.ok(messages[0].edits >= 1, 'the message was edited as the answer grew');
      } finally {
        slack.refuse('chat.startStream', null);
      }
    });

    test('a 429 from the Web API is waited out for its Retry-After, and the answer posted once', async () => {
      const bot = await freshBot(ctx, slack, { script: [{ text: 'after the limit' }] });
      slack.rateLimitNext('chat.startStream', 1);
      const event = mention({ text: 'busy day', channel: 'C0LIMIT' });
      assert.equal((await postEvent(ctx, bot, event)).status, 200);
      const [message] = await settled('C0LIMIT', event.event.ts);
      assert.equal(message.text, 'after the limit');
      const starts = slack.callsIn('C0LIMIT', event.event.ts).filter((c) => c.method === 'chat.startStream');
      assert.deepEqual(
        starts.map((c) => c.status),
        [429, 200],
        'refused once, then sent once',
      );
      assert.equal(slack.messages('C0LIMIT', event.event.ts).length, 1);
    });

    test("a long answer is split into messages within Slack's limits, in order, nothing lost", async () => {
      const words = Array.from({ length: 700 }, (_, i) => `word-${String(i).padStart(4, '0')}-abcdefgh`);
      const text = words.join(' ');
      const bot = await freshBot(ctx, slack, { script: [{ text }] });
      const event = mention({ text: 'tell me everything', channel: 'C0LONG' });
      assert.equal((await postEvent(ctx, bot, event)).status, 200);
      const messages = await settled('C0LONG', event.event.ts, 2);
      assert.equal(messages.length, 2);
      assert.equal(messages.map((m) => m.text).join(''), text);
      for (const m of messages) assert.ok(m.text.length <= 10_000, `a message of ${m.text.length} characters`);
      assert.ok(messages[0].text.endsWith(' '), 'split at a space, not inside a word');
    });

    test('a failed response reaches the thread as one short readable line', async () => {
      const bot = await freshBot(ctx, slack, { script: [{ error: { status: 400, message: 'the provider refused' } }] });
      const event = mention({ text: 'break please', channel: 'C0FAIL' });
      assert.equal((await postEvent(ctx, bot, event)).status, 200);
      const [message] = await settled('C0FAIL', event.event.ts);
      assert.match(message.text, /^Sorry, I could not answer: .*the provider refused/);
      assert.ok(!message.text.includes('\n') && !/\bat .*\.[jt]s:\d+/.test(message.text), 'no stack trace');
      assert.ok(!message.text.includes(BOT_TOKEN) && !message.text.includes(SIGNING_SECRET));
    });

    test('a channel the bot cannot post in ends the reply: no endless retries', async () => {
      slack.refuse('chat.startStream', 'not_in_channel');
      try {
        const bot = await freshBot(ctx, slack, { script: [{ text: 'nowhere to go' }] });
        const event = mention({ text: 'hello?', channel: 'C0GONE' });
        assert.equal((await postEvent(ctx, bot, event)).status, 200);
        await eventually(() => slack.callsIn('C0GONE', event.event.ts).some((c) => c.method === 'chat.startStream'));
        const { data } = await ctx().hub.api.responses.list(bot.projectId, {}, {});
        await ctx().hub.api.responses.waitUntilSettled(bot.projectId, data[0].id, 10_000);
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const attempts = slack.callsIn('C0GONE', event.event.ts).filter((c) => c.method === 'chat.startStream').length;
        assert.equal(attempts, 1, 'refused for good after one attempt');
      } finally {
        slack.refuse('chat.startStream', null);
      }
    });
  },
  SLACK_SETTINGS,
);
