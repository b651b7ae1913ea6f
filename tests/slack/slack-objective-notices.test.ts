// An objective started on a Slack thread's session announces its notifications
// in that thread, through the outbox and the bot's Web API client (the fake
// Slack here): a wake that failed, the objective blocked; once each, and no
// more once its notify turns the thread off. `slack_thread: true` for a session
// that is no thread's is refused, and nothing is written.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { describeEachStore, withSlice } from '../support/hub.js';
import { startFakeSlackApi, type FakeSlackApi } from './fake-slack-api.js';
import { eventually, freshBot, postEvent, SLACK_SETTINGS } from './slack-harness.js';
import { mention } from './slack-signing.js';

let slack: FakeSlackApi;
before(async () => {
  slack = await startFakeSlackApi();
});
after(() => slack.close());

describeEachStore(
  "objectives' notifications in a Slack thread",
  (ctx) => {
    test('an objective on a thread’s session tells the thread of a failed wake and of being blocked, once each', async () => {
      // The thread's answer is the model's first turn; the objective's wake, continuing the session, its second.
      const bot = await freshBot(ctx, slack, { script: [{ text: 'I will keep an eye on it.' }, { error: { status: 400, message: 'the model refused' } }] });
      const rest = (method: 'get' | 'post' | 'patch', path: string, body?: object) => {
        const req = ctx().http[method](path).set(bot.auth);
        return body ? req.send(body) : req;
      };
      const event = mention({ text: 'watch the deploy', channel: 'C0WATCH' });
      assert.equal((await postEvent(ctx, bot, event)).status, 200);
      await eventually(() => slack.messages('C0WATCH', event.event.ts).some((m) => m.text === 'I will keep an eye on it.' && !m.streaming));
      const threads = (await rest('get', `/v1/slack_bots/${bot.id}/threads`)).body.data as { session_id: string }[];
      assert.equal(threads.length, 1);

      const noSession = await rest('post', '/v1/objectives', { agent: 'helper', description: 'Watch.', notify: { slack_thread: true } });
      assert.equal(noSession.status, 400, noSession.text);
      assert.equal(noSession.body.errors[0].pointer, '/notify/slack_thread');
      assert.equal((await rest('get', '/v1/objectives')).body.data.length, 0, 'nothing was written');

      const created = await rest('post', '/v1/objectives', { agent: 'helper', description: 'Watch the deploy.', session: threads[0].session_id });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(created.body.notify, { slack_thread: true }, 'a thread’s session is announced in its thread by default');
      const id = created.body.id as string;
      const draft = await rest('post', `/v1/objectives/${id}/policies`, {
        document: {
          objective_scope: 'the deploy',
          consequence_classes: ['observe'],
          allowed_tools: null,
          max_tokens: 1000,
          max_seconds: 60,
          quiet_hours: null,
          expires_at: null,
        },
      });
      const approved = await rest('post', `/v1/objectives/${id}/policies/${draft.body.version}/approve`, { hash: draft.body.hash });
      assert.equal(approved.status, 200, approved.text);
      const wake = await rest('post', `/v1/objectives/${id}/wake`, {});
      assert.equal(wake.body.outcome, 'admitted', wake.text);
      const settled = await ctx().hub.api.responses.waitUntilSettled(bot.projectId, wake.body.response_id, 40_000);
      assert.equal(settled.status, 'failed');
      await rest('post', `/v1/objectives/${id}/policies/${approved.body.version}/revoke`);

      const autonomy = withSlice(ctx().hub, 'autonomy');
      const notices = () =>
        slack
          .callsIn('C0WATCH', event.event.ts)
          .filter((c) => c.method === 'chat.postMessage' && String(c.args.text ?? '').startsWith(`Objective ${id}`))
          .map((c) => String(c.args.text));
      const both = await eventually(async () => {
        await autonomy.scheduler.announce();
        const found = notices();
        return found.length >= 2 && found;
      });
      assert.equal(both.length, 2, both.join('\n'));
      assert.ok(
        both.some((t) => t.includes('a wake failed') && t.includes('the model refused')),
        both.join('\n'),
      );
      assert.ok(
        both.some((t) => t.includes('the objective is blocked') && t.includes('policy-revoked')),
        both.join('\n'),
      );
      assert.equal(await autonomy.scheduler.announce(), 0, 'announced once');

      // Turned off: a later block (another reason) is not posted; turned on again, what is new then is.
      const off = await rest('patch', `/v1/objectives/${id}`, { notify: {} });
      assert.deepEqual(off.body.notify, {});
      await ctx().hub.kernel.db.query("UPDATE objectives SET blocked_reason = 'policy-expired: for the test' WHERE id = $1", [id]);
      assert.equal(await autonomy.scheduler.announce(), 0);
      assert.equal(notices().length, 2);
      const on = await rest('patch', `/v1/objectives/${id}`, { notify: { slack_thread: true } });
      assert.deepEqual(on.body.notify, { slack_thread: true });
      const three = await eventually(async () => {
        await autonomy.scheduler.announce();
        const found = notices();
        return found.length >= 3 && found;
      });
      assert.equal(three.length, 3);
      assert.match(three[2], /blocked\. policy-expired: for the test/);
    });
  },
  SLACK_SETTINGS,
);
