// People in the thread: a tool call that needs approval is posted with its
// arguments and risk and Approve / Deny buttons; only the bot's approvers
// decide (anyone else is told privately), the decision resumes the run and the
// request is rewritten with who decided and when. A question the agent asks is
// posted in the thread, and the next reply there answers it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { describeEachStore } from '../support/hub.js';
import { startFakeSlackApi, type FakeSlackApi } from './fake-slack-api.js';
import { eventually, freshBot, postEvent, postInteraction, responseCount, SLACK_SETTINGS, threadMessage } from './slack-harness.js';
import { assertProblem } from '../support/spec.js';
import { mention, slackHeaders } from './slack-signing.js';

let slack: FakeSlackApi;
before(async () => {
  slack = await startFakeSlackApi();
});
after(() => slack.close());

interface ButtonBlock {
  type: string;
  elements?: Array<{ action_id: string; value: string }>;
  text?: { text: string };
}

/** A click on one of a prompt's buttons, as Slack posts it. */
const click = (user: string, channel: string, message: { ts: string; threadTs: string | null }, button: { action_id: string; value: string }) => ({
  type: 'block_actions',
  user: { id: user, team_id: 'T0TEAM' },
  team: { id: 'T0TEAM' },
  channel: { id: channel },
  container: { type: 'message', message_ts: message.ts, channel_id: channel, thread_ts: message.threadTs },
  actions: [{ type: 'button', block_id: 'palai_decision', action_id: button.action_id, value: button.value, action_ts: `${Date.now() / 1000}` }],
});

describeEachStore(
  'Slack approvals and questions',
  (ctx) => {
    test('only an approver decides; the decision resumes the run and rewrites the request with who decided', async () => {
      const bot = await freshBot(
        ctx,
        slack,
        {
          script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'ship <v2> & tell @here' } }] }, { text: 'shipped' }],
          tools: [{ type: 'builtin', name: 'echo' }],
          approval: { tools: ['echo'] },
        },
        { approvers: ['U0BOSS'] },
      );
      const event = mention({ text: 'ship it', channel: 'C0APPROVE' });
      assert.equal((await postEvent(ctx, bot, event)).status, 200);
      const prompt = await eventually(() => slack.messages('C0APPROVE', event.event.ts).find((m) => m.blocks));
      const blocks = prompt.blocks as ButtonBlock[];
      const summary = blocks[0].text!.text;
      assert.match(summary, /Approval needed.*`echo`.*risk: \*\w+\*/s);
      assert.ok(summary.includes('ship &lt;v2&gt; &amp; tell @here'), 'the arguments are shown, escaped so they cannot mention or link anyone');
      const [approve, deny] = blocks[1].elements!;
      assert.deepEqual([approve.action_id, deny.action_id], ['palai_approve', 'palai_deny']);
      const { data } = await ctx().hub.api.responses.list(bot.projectId, {}, {});
      assert.equal(data[0].status, 'waiting_for_approval');

      // Someone else clicks: told privately, nothing decided.
      assert.equal((await postInteraction(ctx, bot, click('U0OTHER', 'C0APPROVE', prompt, approve))).status, 200);
      const refusal = await eventually(() =>
        slack.callsIn('C0APPROVE', event.event.ts).find((c) => c.method === 'chat.postEphemeral' && c.args.user === 'U0OTHER'),
      );
      assert.match(String(refusal.args.text), /Only the approvers/);
      assert.equal((await ctx().hub.api.responses.get(bot.projectId, data[0].id)).status, 'waiting_for_approval');

      // A forged click (not signed with the bot's secret) is refused and decides nothing.
      const forged = new URLSearchParams({ payload: JSON.stringify(click('U0BOSS', 'C0APPROVE', prompt, approve)) }).toString();
      const refused = await ctx()
        .http.post(`/slack/${bot.id}/interactions`)
        .set({ ...slackHeaders('not-the-signing-secret', forged), 'content-type': 'application/x-www-form-urlencoded' })
        .send(forged);
      assertProblem(refused, 401, 'unauthorized');
      const garbled = await postInteraction(ctx, bot, 'not json');
      assert.equal(garbled.status, 200, 'a payload that is not a click is acknowledged and ignored');
      assert.equal((await ctx().hub.api.responses.get(bot.projectId, data[0].id)).status, 'waiting_for_approval');

      // The approver clicks: the run resumes and completes; the request says who decided.
      assert.equal((await postInteraction(ctx, bot, click('U0BOSS', 'C0APPROVE', prompt, approve))).status, 200);
      const done = await ctx().hub.api.responses.waitUntilSettled(bot.projectId, data[0].id, 15_000);
      assert.equal(done.status, 'completed');
      const rewritten = await eventually(() => slack.messages('C0APPROVE', event.event.ts).find((m) => m.ts === prompt.ts && m.edits > 0));
      assert.equal(rewritten.edits, 1);
      const context = JSON.stringify(rewritten.blocks);
      assert.match(context, /Approved by <@U0BOSS> <!date\^\d+\^/);
      assert.ok(!context.includes('palai_approve'), 'the buttons are gone');
      const answer = await eventually(() => slack.messages('C0APPROVE', event.event.ts).find((m) => m.text === 'shipped' && !m.streaming));
      assert.ok(answer);

      // A late click changes nothing.
      assert.equal((await postInteraction(ctx, bot, click('U0BOSS', 'C0APPROVE', prompt, deny))).status, 200);
      assert.equal((await ctx().hub.api.responses.get(bot.projectId, data[0].id)).status, 'completed');
      const again = await eventually(() => slack.messages('C0APPROVE', event.event.ts).find((m) => m.ts === prompt.ts && m.edits === 2));
      assert.match(JSON.stringify(again.blocks), /Approved by <@U0BOSS>/, 'still the first decision');
    });

    test('a denial clicked before Slack has answered the post of its prompt resumes the run with the call denied', async () => {
      const bot = await freshBot(
        ctx,
        slack,
        {
          script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'drop tables' } }] }, { text: 'understood' }],
          tools: [{ type: 'builtin', name: 'echo' }],
          approval: { tools: ['echo'] },
        },
        { approvers: ['U0BOSS'] },
      );
      const event = mention({ text: 'clean up', channel: 'C0DENY' });
      // The prompt shows in the thread, but the bot has not yet heard back from Slack when the approver clicks.
      const held = slack.hold('chat.postMessage', (args) => args.channel === 'C0DENY' && Array.isArray(args.blocks));
      assert.equal((await postEvent(ctx, bot, event)).status, 200);
      const prompt = await eventually(() => slack.messages('C0DENY', event.event.ts).find((m) => m.blocks));
      const deny = (prompt.blocks as ButtonBlock[])[1].elements![1];
      assert.equal((await postInteraction(ctx, bot, click('U0BOSS', 'C0DENY', prompt, deny))).status, 200);
      const { data } = await ctx().hub.api.responses.list(bot.projectId, {}, {});
      const done = await ctx().hub.api.responses.waitUntilSettled(bot.projectId, data[0].id, 15_000);
      assert.equal(done.status, 'completed');
      assert.equal(held.held(), 1, "the prompt's post was still unanswered when the click decided");
      const calls = slack.callsIn('C0DENY', event.event.ts);
      assert.ok(!calls.some((c) => c.method === 'chat.postEphemeral'), 'the approver was not told the request is unknown');
      held.release();
      await eventually(() => slack.messages('C0DENY', event.event.ts).find((m) => m.text === 'understood' && !m.streaming));
      const denied = await eventually(() => slack.messages('C0DENY', event.event.ts).find((m) => m.ts === prompt.ts && m.edits > 0));
      assert.match(JSON.stringify(denied.blocks), /Denied by <@U0BOSS>/);
    });

    test('a question is asked in the thread and the next reply answers it, in the same response', async () => {
      const bot = await freshBot(ctx, slack, {
        script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which city?' } }] }, { text: 'Booked.' }],
        tools: [{ type: 'builtin', name: 'ask_user' }],
      });
      const event = mention({ text: 'book a trip', channel: 'C0ASK' });
      assert.equal((await postEvent(ctx, bot, event)).status, 200);
      await eventually(() => slack.messages('C0ASK', event.event.ts).find((m) => m.text === 'Which city?'));
      const reply = threadMessage({ text: 'Paris', channel: 'C0ASK', threadTs: event.event.ts });
      assert.equal((await postEvent(ctx, bot, reply)).status, 200);
      await eventually(() => slack.messages('C0ASK', event.event.ts).find((m) => m.text === 'Booked.' && !m.streaming));
      assert.equal(await responseCount(ctx, bot), 1, 'the reply answered the waiting response; it started none');
      const { data } = await ctx().hub.api.responses.list(bot.projectId, {}, {});
      const items = await ctx().hub.api.sessions.items(bot.projectId, data[0].session_id!, { limit: 50 });
      assert.ok(JSON.stringify(items.data).includes('Paris'), 'the answer is in the conversation');
    });
  },
  SLACK_SETTINGS,
);
