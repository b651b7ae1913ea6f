// The Slack surface in Socket Mode, as a specification of its wiring, against
// local stand-ins for Slack's Web API (apps.connections.open) and its Socket
// Mode WebSocket server: an events_api envelope becomes one response and is
// acknowledged; a redelivered one admits nothing new; one connection per bot
// across processes, taken over when its holder stops; a WebSocket host the
// egress guard refuses is never connected to; a refused app token is retried
// with growing pauses, not on every poll; no token or ticket reaches the log.
//
// The hub runs as `palai bot slack` runs it (role worker), so no supervisor of
// the hub's own competes for the test's bots.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { SlackSocketSupervisor } from '../../bots/slack/socket/supervisor.js';
import { startHub, type Hub } from '../../cli/hub.js';
import { createApiKey } from '../../core/auth/api-keys.js';
import { createProject } from '../../core/auth/projects.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { createLogger, type Logger } from '../../core/logger.js';
import { testConfig, withSlice } from '../support/hub.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';
import { startFakeSlackApi, type FakeSlackApi } from './fake-slack-api.js';
import { startFakeSocketMode, type FakeSocketConnection, type FakeSocketMode } from './fake-socket-mode.js';
import { eventually as waitFor } from './slack-harness.js';
import { mention } from './slack-signing.js';

const SETTINGS = { secretKey: 'slack-tests-secret-key-0123456789', egressAllowHosts: ['127.0.0.1'] };
const BOT_TOKEN = 'xoxb-socket-bot-token-0001';
const APP_TOKEN = 'xapp-1-A0APP-socket-app-token-0001';
/** Short, so leases run out and renew within a test. */
const TIMING = { pollMs: 50, leaseMs: 600 };

let slack: FakeSlackApi;
let sockets: FakeSocketMode;
before(async () => {
  slack = await startFakeSlackApi();
  sockets = await startFakeSocketMode();
});
after(async () => {
  await slack.close();
  await sockets.close();
});

const eventually = <T>(probe: Parameters<typeof waitFor<T>>[0], timeoutMs = 10_000) => waitFor(probe, timeoutMs, 20);

/** A logger whose lines the test reads. */
function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => void (lines.push(String(chunk)), done()) });
  return { logger: createLogger('debug', sink), lines };
}

const openCalls = (token = APP_TOKEN) => slack.calls.filter((c) => c.method === 'apps.connections.open' && c.token === token);

function envelope(payload: unknown, envelopeId = `env-${Math.random().toString(36).slice(2)}`) {
  return { envelope_id: envelopeId, type: 'events_api', accepts_response_payload: false, retry_attempt: 0, retry_reason: '', payload };
}

interface Ctx {
  hub: Hub;
  http: ReturnType<typeof request>;
}

interface Bot {
  id: string;
  name: string;
  projectId: string;
  auth: { Authorization: string };
}

/** A fresh project with an agent and a bot in socket mode, its Web API the stand-in. */
async function socketBot(ctx: Ctx, options: { name?: string; appToken?: string } = {}): Promise<Bot> {
  const project = await createProject(ctx.hub.kernel.db, `socket-${Math.random().toString(36).slice(2)}`);
  const auth = { Authorization: `Bearer ${(await createApiKey(ctx.hub.kernel.db, project.id, 'test')).secret}` };
  const agent = await ctx.http
    .post('/v1/agents')
    .set(auth)
    .send({ name: 'helper', model: { provider: 'fake' } });
  assert.equal(agent.status, 201, agent.text);
  const name = options.name ?? `bot-${Math.random().toString(36).slice(2, 8)}`;
  const bot = await ctx.http
    .post('/v1/slack_bots')
    .set(auth)
    .send({
      name,
      agent: 'helper',
      mode: 'socket',
      bot_token: BOT_TOKEN,
      signing_secret: 'unused-in-socket-mode',
      app_token: options.appToken ?? APP_TOKEN,
      api_url: slack.url,
    });
  assert.equal(bot.status, 201, bot.text);
  return { id: bot.body.id, name, projectId: project.id, auth };
}

for (const kind of storeKinds) {
  describe(`Slack Socket Mode [${kind}]`, { skip: kind === 'postgres' ? ((await postgresUnavailable()) ?? false) : false }, () => {
    let database: TestDatabase;
    let ctx: Ctx;
    before(async () => {
      database = await openTestDatabase(kind);
      const hub = await startHub({ config: testConfig(SETTINGS), db: database.db, logger: createLogger('silent'), role: 'worker' });
      ctx = { hub, http: request(hub.app) };
    });
    after(async () => {
      await ctx?.hub.close();
      await database?.drop();
    });

    test('an events_api envelope is admitted once and acknowledged; one process holds the connection, another takes over when it stops', async () => {
      const bot = await socketBot(ctx);
      slack.answer('apps.connections.open', { url: sockets.url() });
      const before = sockets.connections.length;
      const { logger, lines } = recordingLogger();
      const first = new SlackSocketSupervisor(withSlice(ctx.hub, 'slack'), { only: bot.name, ...TIMING, logger });
      const second = new SlackSocketSupervisor(withSlice(ctx.hub, 'slack'), { only: bot.id, ...TIMING, logger });
      try {
        await first.start();
        const connection: FakeSocketConnection = await eventually(() => sockets.connections.length > before && sockets.connections[before]);
        assert.equal(openCalls().length > 0, true, 'apps.connections.open is called with the app token');
        await eventually(() => first.connections.get(bot.id) === 'open');

        const event = envelope(mention({ text: 'hello over the socket', channel: 'C0SOCK' }));
        connection.send(event);
        const ack = await connection.ack(event.envelope_id);
        assert.deepEqual(ack, { envelope_id: event.envelope_id, payload: {} });
        assert.equal(await ctx.hub.api.responses.count(bot.projectId, {}), 1, 'admitted before the ack');

        // Slack redelivers an envelope it thinks was not acknowledged: the same event_id admits nothing new.
        connection.send(event);
        await eventually(() => connection.received.filter((m) => m.envelope_id === event.envelope_id).length === 2);
        assert.equal(await ctx.hub.api.responses.count(bot.projectId, {}), 1);

        // Another process: while the first renews its lease, it never connects.
        await second.start();
        await sleep(TIMING.leaseMs * 2);
        assert.equal(second.connections.size, 0);
        assert.equal(sockets.connections.length, before + 1, 'one connection for the bot');

        await first.stop();
        await eventually(() => connection.closed);
        const takeover = await eventually(() => sockets.connections.length > before + 1 && sockets.connections[before + 1]);
        await eventually(() => second.connections.get(bot.id) === 'open');
        const next = envelope(mention({ text: 'after the takeover', channel: 'C0SOCK' }));
        takeover.send(next);
        await takeover.ack(next.envelope_id);
        assert.equal(await ctx.hub.api.responses.count(bot.projectId, {}), 2);
        assert.equal(sockets.open().length, 1);
      } finally {
        await first.stop();
        await second.stop();
      }
      const logged = lines.join('');
      for (const secret of [APP_TOKEN, BOT_TOKEN, 'fake-ticket']) assert.equal(logged.includes(secret), false, `${secret} is not in the log`);
    });

    test('a deleted bot is disconnected and its lease let go', async () => {
      const bot = await socketBot(ctx);
      slack.answer('apps.connections.open', { url: sockets.url() });
      const before = sockets.connections.length;
      const supervisor = new SlackSocketSupervisor(withSlice(ctx.hub, 'slack'), { only: bot.id, ...TIMING });
      try {
        await supervisor.start();
        const connection = await eventually(() => sockets.connections.length > before && sockets.connections[before]);
        assert.equal((await ctx.http.delete(`/v1/slack_bots/${bot.id}`).set(bot.auth)).status, 200);
        await eventually(() => connection.closed);
        assert.equal(supervisor.connections.size, 0);
      } finally {
        await supervisor.stop();
      }
    });

    test('a WebSocket host the egress guard refuses is not connected to', async () => {
      const bot = await socketBot(ctx);
      // localhost is loopback, and only 127.0.0.1 as written is allowed.
      slack.answer('apps.connections.open', { url: sockets.url('localhost') });
      const before = sockets.connections.length;
      const calls = openCalls().length;
      const { logger, lines } = recordingLogger();
      const supervisor = new SlackSocketSupervisor(withSlice(ctx.hub, 'slack'), { only: bot.id, ...TIMING, logger });
      try {
        await supervisor.start();
        await eventually(() => openCalls().length >= calls + 2);
        await eventually(() => supervisor.connections.get(bot.id) === 'waiting');
      } finally {
        await supervisor.stop();
      }
      assert.equal(sockets.connections.length, before, 'no connection reached the stand-in');
      const refusals = lines.filter((l) => l.includes('could not connect'));
      assert.ok(refusals.length > 0);
      assert.match(refusals[0], /localhost.*refused/);
      assert.equal(lines.join('').includes('fake-ticket'), false);
    });

    test('a refused app token is logged in one line per attempt and retried with growing pauses; a new token connects', async () => {
      const badToken = 'xapp-1-A0APP-revoked-token-0002';
      const bot = await socketBot(ctx, { appToken: badToken });
      // Refused for this token alone, as Slack does: a retry still in flight when the new token is saved stays refused.
      slack.answer('apps.connections.open', { url: sockets.url() });
      slack.revokeToken(badToken);
      const earlier = openCalls(badToken).length;
      const { logger, lines } = recordingLogger();
      const supervisor = new SlackSocketSupervisor(withSlice(ctx.hub, 'slack'), { only: bot.id, pollMs: 20, leaseMs: TIMING.leaseMs, logger });
      try {
        await supervisor.start();
        await sleep(1_500);
        // Every poll (20 ms) would be 75 calls; pauses of 20, 40, 80 ms, doubling, leave a handful.
        const attempts = openCalls(badToken).length - earlier;
        assert.ok(attempts >= 2 && attempts <= 8, `${attempts} attempts`);
        const failures = lines.filter((l) => l.includes('could not connect'));
        assert.ok(Math.abs(failures.length - attempts) <= 1, `${failures.length} lines for ${attempts} attempts`);
        assert.match(failures[0], /invalid_auth/);
        assert.equal(lines.join('').includes(badToken), false);

        const before = sockets.connections.length;
        const patched = await ctx.http.patch(`/v1/slack_bots/${bot.id}`).set(bot.auth).send({ app_token: APP_TOKEN });
        assert.equal(patched.status, 200, patched.text);
        await eventually(() => supervisor.connections.get(bot.id) === 'open');
        assert.equal(sockets.connections.length, before + 1);
      } finally {
        await supervisor.stop();
      }
    });

    test('a name several bots in socket mode share is refused; an unknown one too', async () => {
      await socketBot(ctx, { name: 'twin' });
      await socketBot(ctx, { name: 'twin' });
      await assert.rejects(
        new SlackSocketSupervisor(withSlice(ctx.hub, 'slack'), { only: 'twin', ...TIMING }).start(),
        (error) => error instanceof PalaiError && error.slug === 'invalid-request',
      );
      await assert.rejects(
        new SlackSocketSupervisor(withSlice(ctx.hub, 'slack'), { only: 'nobody', ...TIMING }).start(),
        (error) => error instanceof PalaiError && error.slug === 'not-found',
      );
    });
  });
}
