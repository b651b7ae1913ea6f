// The Slack app manifests an operator pastes into Slack (deploy/slack/) ask for
// what the bot handles and nothing it cannot: every subscribed event is one the
// bot acts on, the request URLs are the bot's routes, and the scopes cover the
// Web API methods it calls.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'yaml';
import { eventAction } from '../../bots/slack/events.js';

const manifest = (name: string) => parse(readFileSync(new URL(`../../deploy/slack/${name}`, import.meta.url), 'utf8'));

/** A user's message as each subscribed event delivers it. */
const sample: Record<string, Record<string, unknown>> = {
  app_mention: { type: 'app_mention', text: '<@U0BOT> hi' },
  'message.im': { type: 'message', channel_type: 'im', text: 'hi' },
  'message.channels': { type: 'message', channel_type: 'channel', text: 'hi', thread_ts: '1.000001' },
  'message.groups': { type: 'message', channel_type: 'group', text: 'hi', thread_ts: '1.000001' },
};

for (const file of ['manifest.yaml', 'manifest-socket.yaml']) {
  test(`${file}: every subscribed event is acted on, and the scopes cover the bot's calls`, () => {
    const app = manifest(file);
    const events: string[] = app.settings.event_subscriptions.bot_events;
    assert.deepEqual([...events].sort(), Object.keys(sample).sort());
    for (const name of events) {
      const action = eventAction({
        type: 'event_callback',
        team_id: 'T0',
        event_id: 'Ev1',
        event: { ...sample[name], user: 'U0HUMAN', ts: '2.000002', channel: 'C0' },
      });
      assert.notEqual(action.kind, 'ignore', `${name} is subscribed but ignored`);
    }
    const scopes: string[] = app.oauth_config.scopes.bot;
    for (const scope of ['app_mentions:read', 'chat:write', 'im:history', 'channels:history', 'groups:history', 'assistant:write'])
      assert.ok(scopes.includes(scope), scope);
    assert.equal(app.settings.interactivity.is_enabled, true, 'the approval buttons need interactivity');
    const socket = file.includes('socket');
    assert.equal(app.settings.socket_mode_enabled, socket);
    if (!socket) {
      assert.match(app.settings.event_subscriptions.request_url, /^https:\/\/PALAI_URL\/slack\/sbot_REPLACE_ME\/events$/);
      assert.match(app.settings.interactivity.request_url, /^https:\/\/PALAI_URL\/slack\/sbot_REPLACE_ME\/interactions$/);
    } else {
      assert.equal(app.settings.event_subscriptions.request_url, undefined);
    }
  });
}
