// A Palai restart mid-answer: `palai serve` is killed with SIGKILL while an
// answer streams into a Slack thread, and another starts on the same database.
// The answer continues in the same message: one stream started, every part
// appended to it, the whole answer exactly once, no second message.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanUpProcesses } from '../support/cli.js';
import { postgresUnavailable } from '../support/stores.js';
import { startFakeSlackApi, type FakeSlackApi } from '../slack/fake-slack-api.js';
import { mention, slackHeaders } from '../slack/slack-signing.js';
import { api, baseOf, createAgent, kill9, logsOf, useCluster, waitUntil } from './cluster.js';

const postgresReason = await postgresUnavailable();
const SIGNING_SECRET = 'e2e-slack-signing-secret';
let slack: FakeSlackApi;

before(async () => {
  slack = await startFakeSlackApi();
});
after(async () => {
  await slack.close();
  cleanUpProcesses();
});

describe('a Slack answer across a SIGKILL', { skip: postgresReason ?? false }, () => {
  const cluster = useCluster({ PALAI_SECRET_KEY: 'e2e-slack-secret-key-0123456789', PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1', PALAI_LEASE_SECONDS: '2' });

  test('the answer continues in the same message after the process streaming it is killed', { timeout: 120_000 }, async () => {
    const first = await cluster.start('first', 'all');
    const base = baseOf(first);
    const words = Array.from({ length: 30 }, (_, i) => `part${i}`);
    const answer = words.join(' ');
    await createAgent(base, { name: 'talker', model: { provider: 'fake', script: [{ text: answer, delay_ms: 150 }] } });
    const bot = await api(base, 'POST', '/v1/slack_bots', {
      name: 'talker-bot',
      agent: 'talker',
      bot_token: 'xoxb-e2e-token-0001',
      signing_secret: SIGNING_SECRET,
      api_url: slack.url,
    });
    assert.equal(bot.status, 201, JSON.stringify(bot.body));
    const event = mention({ text: 'talk to me', channel: 'C0CRASH' });
    const body = JSON.stringify(event);
    const ack = await fetch(`${base}/slack/${bot.body.id}/events`, { method: 'POST', headers: slackHeaders(SIGNING_SECRET, body), body });
    assert.equal(ack.status, 200, await ack.text());

    const inThread = () => slack.calls.filter((c) => c.args.channel === 'C0CRASH' && c.ok);
    // Started and appended to at least once: then killed in the quiet between two writes (they are a second apart).
    await waitUntil('the answer is streaming', 20_000, () => inThread().some((c) => c.method === 'chat.appendStream'));
    await sleep(150);
    await kill9(first);
    const partial = slack.messages('C0CRASH', event.event.ts);
    assert.equal(partial.length, 1);
    assert.ok(partial[0].streaming && partial[0].text.length < answer.length, `killed mid-answer: ${JSON.stringify(partial[0].text)}`);

    const second = await cluster.start('second', 'all');
    const [message] = await waitUntil('the answer is finished', 60_000, () => {
      const messages = slack.messages('C0CRASH', event.event.ts);
      return messages.length === 1 && !messages[0].streaming && messages;
    }).catch((error: Error) => {
      throw new Error(`${error.message}\n${JSON.stringify(slack.messages('C0CRASH', event.event.ts))}\n${logsOf(first, second)}`);
    });
    assert.equal(message.text, answer, 'the whole answer, exactly once');
    assert.equal(message.ts, partial[0].ts, 'in the message the first process started');
    const methods = inThread().map((c) => c.method);
    assert.equal(methods.filter((m) => m === 'chat.startStream').length, 1);
    assert.equal(methods.filter((m) => m === 'chat.postMessage' || m === 'chat.update').length, 0, 'no second message, no rewrite');
    assert.ok(
      inThread()
        .filter((c) => c.method === 'chat.appendStream')
        .every((c) => c.args.ts === message.ts),
    );
    assert.equal(methods.at(-1), 'chat.stopStream');
  });
});
