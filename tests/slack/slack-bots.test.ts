// Slack bots as resources: created bound to an existing agent, read, changed and
// deleted through /v1/slack_bots; bad input is a problem naming the field; the
// bot token, signing secret and app token are never shown again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';

const SETTINGS = { secretKey: 'slack-tests-secret-key-0123456789', egressAllowHosts: ['127.0.0.1'] };
const BOT_TOKEN = 'xoxb-1111-2222-botTokenValueNeverShown';
const SIGNING_SECRET = 'signing-secret-never-shown-0123';
const APP_TOKEN = 'xapp-1-appTokenValueNeverShown';

describeEachStore(
  'Slack bots',
  (ctx) => {
    test('bad input is answered with problems naming the field; secrets are never shown', async () => {
      const { http, auth } = ctx();
      assert.equal(
        (
          await http
            .post('/v1/agents')
            .set(auth)
            .send({ name: 'helper', model: { provider: 'fake' } })
        ).status,
        201,
      );
      const valid = { name: 'support', agent: 'helper', bot_token: BOT_TOKEN, signing_secret: SIGNING_SECRET };
      const post = (body: Record<string, unknown>) => http.post('/v1/slack_bots').set(auth).send(body);
      const pointers = (res: { body: { errors?: Array<{ pointer: string }> } }) => (res.body.errors ?? []).map((e) => e.pointer);

      const noToken = await post({ ...valid, bot_token: undefined });
      assertProblem(noToken, 400, 'validation-failed');
      const badToken = await post({ ...valid, bot_token: 'not-a-bot-token' });
      assertProblem(badToken, 400, 'validation-failed');
      assert.ok(pointers(badToken).includes('/bot_token'), badToken.text);
      const badUrl = await post({ ...valid, api_url: 'ftp://slack.example' });
      assertProblem(badUrl, 400, 'validation-failed');
      assert.ok(pointers(badUrl).includes('/api_url'), badUrl.text);
      const withUser = await post({ ...valid, api_url: 'https://user:pw@slack.example/api/' });
      assertProblem(withUser, 400, 'validation-failed');
      assert.deepEqual(pointers(withUser), ['/api_url']);
      const socketNoApp = await post({ ...valid, mode: 'socket' });
      assertProblem(socketNoApp, 400, 'validation-failed');
      assert.deepEqual(pointers(socketNoApp), ['/app_token']);
      assertProblem(await post({ ...valid, agent: 'nobody' }), 404, 'agent-not-found');
      for (const res of [noToken, badToken, badUrl, withUser]) assert.ok(!res.text.includes(SIGNING_SECRET));

      const created = await post({ ...valid, app_token: APP_TOKEN, approvers: ['U012APPROVER'], api_url: 'http://127.0.0.1:9/api' });
      assertMatchesSpec(created, 'createSlackBot');
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.bot_token_last4, 'hown');
      assert.equal(created.body.api_url, 'http://127.0.0.1:9/api/');
      assert.equal(created.body.events_path, `/slack/${created.body.id}/events`);
      assert.equal(created.body.has_app_token, true);
      assertProblem(await post(valid), 409, 'conflict');

      const got = await http.get(`/v1/slack_bots/${created.body.id}`).set(auth);
      assertMatchesSpec(got, 'getSlackBot');
      const list = await http.get('/v1/slack_bots').set(auth);
      assertMatchesSpec(list, 'listSlackBots');
      assert.equal(list.body.data.length, 1);
      const patched = await http.patch('/v1/slack_bots/support').set(auth).send({ approvers: [], bot_token: 'xoxb-rotated-9876' });
      assertMatchesSpec(patched, 'updateSlackBot');
      assert.deepEqual([patched.body.approvers, patched.body.bot_token_last4], [[], '9876']);
      assertProblem(await http.patch('/v1/slack_bots/support').set(auth).send({}), 400, 'validation-failed');
      const threads = await http.get('/v1/slack_bots/support/threads').set(auth);
      assertMatchesSpec(threads, 'listSlackThreads');
      assert.deepEqual(threads.body.data, []);
      for (const res of [created, got, list, patched]) {
        for (const secret of [BOT_TOKEN, SIGNING_SECRET, APP_TOKEN, 'xoxb-rotated-9876']) assert.ok(!res.text.includes(secret), 'a secret was shown');
      }

      const other = await ctx().newProjectKey();
      assertProblem(await http.get(`/v1/slack_bots/${created.body.id}`).set({ Authorization: `Bearer ${other}` }), 404, 'not-found');
      const deleted = await http.delete('/v1/slack_bots/support').set(auth);
      assertMatchesSpec(deleted, 'deleteSlackBot');
      assertProblem(await http.get(`/v1/slack_bots/${created.body.id}`).set(auth), 404, 'not-found');
    });
  },
  SETTINGS,
);
