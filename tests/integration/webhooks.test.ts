// Outbound webhooks as a specification, on both stores, against real HTTP
// receivers on 127.0.0.1 (allow-listed in the test configuration): every
// delivery verifies with the standardwebhooks package; failures (500, a
// timeout, a refused connection) are retried under one webhook-id; Retry-After
// is honoured; 410 disables the endpoint; secrets rotate with an overlap;
// endpoints hear only the events and agents they asked for; one slow endpoint
// does not hold up another; operators see every attempt and can resend, replay
// and test. Without the allow-list, private and loopback destinations are refused.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { WebhookEvent as validWebhookEvent } from '../../generated/protocol-validators.js';
import { createEgressFetch } from '../../core/egress/guarded-fetch.js';
import { createAgent } from '../support/api.js';
import { describeEachStore, type TestHub } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { freePort, startReceiver, verified, type Receiver } from '../support/webhook-receiver.js';

const SECRET_KEY = 'webhook-tests-secret-key-0123456789';
const RETRY_MS = 300;
const SETTINGS = {
  secretKey: SECRET_KEY,
  // Long enough that a receiver in this busy process answering late is not a timeout (and a retry: a second
  // attempt, a second request); the hanging receiver of the timeout test waits it out.
  webhookTimeoutSeconds: 3,
  webhookRetryScheduleMs: Array.from({ length: 8 }, () => RETRY_MS),
  webhookDisableAfterSeconds: 3600,
  webhookConcurrency: 2,
};

const receivers: Receiver[] = [];
async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}
after(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

type Auth = { Authorization: string };

async function createEndpoint(ctx: () => TestHub, body: Record<string, unknown>, auth: Auth = ctx().auth) {
  const res = await ctx().http.post('/v1/webhook_endpoints').set(auth).send(body);
  assertMatchesSpec(res, 'createWebhookEndpoint');
  assert.equal(res.status, 201, res.text);
  assert.match(res.body.secret, /^whsec_/);
  return res.body as { id: string; secret: string };
}

async function deliveries(ctx: () => TestHub, endpointId: string, auth: Auth = ctx().auth) {
  const res = await ctx().http.get(`/v1/webhook_endpoints/${endpointId}/deliveries`).set(auth);
  assertMatchesSpec(res, 'listWebhookDeliveries');
  assert.equal(res.status, 200, res.text);
  return res.body.data as Array<Record<string, any>>;
}

async function sendTest(ctx: () => TestHub, endpointId: string, auth: Auth = ctx().auth) {
  const res = await ctx().http.post(`/v1/webhook_endpoints/${endpointId}/test`).set(auth);
  assertMatchesSpec(res, 'testWebhookEndpoint');
  assert.equal(res.status, 202, res.text);
  return res.body as { id: string };
}

async function eventually<T>(probe: () => Promise<T | null | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(25);
  }
}

/** The delivery once it is no longer pending. */
const settled = (ctx: () => TestHub, endpointId: string, deliveryId: string, auth?: Auth) =>
  eventually(async () => (await deliveries(ctx, endpointId, auth)).find((d) => d.id === deliveryId && d.status !== 'pending'));

describeEachStore(
  'webhooks',
  (ctx) => {
    test('bad endpoint input is answered with problems naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ url: 'ftp://example.com/hook', events: ['*'] }, '/url'],
        [{ url: 'file:///etc/passwd', events: ['*'] }, '/url'],
        [{ url: 'https://user:s3cr3tpw@example.com/hook', events: ['*'] }, '/url'],
        [{ url: 'not a url', events: ['*'] }, '/url'],
        [{ url: 'https://example.com/hook', events: ['response.exploded'] }, '/events/0'],
      ];
      for (const [body, pointer] of cases) {
        const res = await ctx().http.post('/v1/webhook_endpoints').set(ctx().auth).send(body);
        assertProblem(res, 400, 'invalid-request');
        assert.deepEqual(
          res.body.errors.map((e: { pointer: string }) => e.pointer),
          [pointer],
          res.text,
        );
        assert.ok(!res.text.includes('s3cr3tpw'), 'the credentials are not echoed');
      }
      assertProblem(await ctx().http.post('/v1/webhook_endpoints').set(ctx().auth).send({ url: 'https://example.com/hook' }), 400, 'validation-failed');
      assertProblem(await ctx().http.post('/v1/webhook_endpoints').set(ctx().auth).send({ url: 'https://example.com', events: [] }), 400, 'validation-failed');
      const unknownAgent = await ctx()
        .http.post('/v1/webhook_endpoints')
        .set(ctx().auth)
        .send({ url: 'https://example.com', events: ['*'], agents: ['nobody'] });
      assertProblem(unknownAgent, 404, 'agent-not-found');
      assertProblem(await ctx().http.get('/v1/webhook_endpoints/wh_nope').set(ctx().auth), 404, 'not-found');
      assertProblem(await ctx().http.patch('/v1/webhook_endpoints/wh_nope').set(ctx().auth).send({ enabled: false }), 404, 'not-found');
    });

    test('CRUD: the secret is shown once, never in list, get or update answers', async () => {
      const created = await createEndpoint(ctx, { url: 'https://example.com/a', events: ['response.completed'], description: 'first' });
      const get = await ctx().http.get(`/v1/webhook_endpoints/${created.id}`).set(ctx().auth);
      assertMatchesSpec(get, 'getWebhookEndpoint');
      assert.equal(get.body.secret, undefined);
      assert.equal(get.body.description, 'first');
      const list = await ctx().http.get('/v1/webhook_endpoints').set(ctx().auth);
      assertMatchesSpec(list, 'listWebhookEndpoints');
      assert.ok(list.body.data.some((e: { id: string }) => e.id === created.id));
      assert.ok(!list.text.includes(created.secret) && !get.text.includes(created.secret));
      const patched = await ctx()
        .http.patch(`/v1/webhook_endpoints/${created.id}`)
        .set(ctx().auth)
        .send({ events: ['*'], description: null, enabled: false });
      assertMatchesSpec(patched, 'updateWebhookEndpoint');
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual([patched.body.events, patched.body.description, patched.body.enabled], [['*'], null, false]);
      assert.ok(!patched.text.includes(created.secret));
      const other = await ctx().newProjectKey();
      assertProblem(
        await ctx()
          .http.get(`/v1/webhook_endpoints/${created.id}`)
          .set({ Authorization: `Bearer ${other}` }),
        404,
        'not-found',
      );
      const keyed = { url: 'https://example.com/b', events: ['*'] };
      const once = await ctx().http.post('/v1/webhook_endpoints').set(ctx().auth).set('Idempotency-Key', `wh-${created.id}`).send(keyed);
      const twice = await ctx().http.post('/v1/webhook_endpoints').set(ctx().auth).set('Idempotency-Key', `wh-${created.id}`).send(keyed);
      assertMatchesSpec(twice, 'createWebhookEndpoint');
      assert.equal(twice.status, 201, twice.text);
      assert.equal(twice.body.id, once.body.id);
      assert.equal(twice.body.secret, undefined, 'a repeat never shows the secret again');
      const deleted = await ctx().http.delete(`/v1/webhook_endpoints/${created.id}`).set(ctx().auth);
      assertMatchesSpec(deleted, 'deleteWebhookEndpoint');
      assert.deepEqual(deleted.body, { id: created.id, object: 'webhook_endpoint.deleted', deleted: true });
      assertProblem(await ctx().http.get(`/v1/webhook_endpoints/${created.id}`).set(ctx().auth), 404, 'not-found');
    });

    test('a delivery is signed per Standard Webhooks and verifies with the standardwebhooks package', async () => {
      const r = await receiver();
      const endpoint = await createEndpoint(ctx, { url: r.url, events: ['*'] });
      const delivery = await sendTest(ctx, endpoint.id);
      const [got] = await r.waitFor(1);
      assert.equal(got.headers['webhook-id'], delivery.id);
      assert.match(String(got.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
      const body = verified(endpoint.secret, got) as Record<string, any>;
      assert.ok(validWebhookEvent(body), JSON.stringify(validWebhookEvent.errors));
      assert.deepEqual([body.type, body.data], ['webhook.test', { endpoint_id: endpoint.id }]);
      assert.throws(() => verified(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, got), /signature/i);
      const done = await settled(ctx, endpoint.id, delivery.id);
      assert.equal(done.status, 'delivered');
      assert.equal(done.attempts.length, 1);
      assert.equal(done.attempts[0].status_code, 204);
    });

    test('a response that completes is announced with the response object, verified, matching the protocol schema', async () => {
      const auth = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
      const r = await receiver();
      await createAgent(ctx, { name: 'announcer', model: { provider: 'fake', script: [{ text: 'hello' }] } }, auth);
      const endpoint = await createEndpoint(ctx, { url: r.url, events: ['response.completed'] }, auth);
      const res = await ctx().http.post('/v1/responses').set(auth).send({ model: 'announcer', input: 'hi' });
      assert.equal(res.status, 200, res.text);
      const [got] = await r.waitFor(1);
      const body = verified(endpoint.secret, got) as Record<string, any>;
      assert.ok(validWebhookEvent(body), JSON.stringify(validWebhookEvent.errors));
      assert.equal(body.type, 'response.completed');
      assert.equal(body.data.response.id, res.body.id);
      assert.equal(body.data.response.status, 'completed');
      assert.ok(Number.isInteger(body.data.sequence));
      assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
    });

    test('500, a timeout and a refused connection are retried under one webhook-id until delivered', async () => {
      const port = await freePort();
      const endpoint = await createEndpoint(ctx, { url: `http://127.0.0.1:${port}/hook`, events: ['*'] });
      const delivery = await sendTest(ctx, endpoint.id);
      // Nothing listens yet: the first attempt's connection is refused.
      await eventually(async () => (await deliveries(ctx, endpoint.id)).find((d) => d.id === delivery.id && d.attempts.length >= 1));
      const r = await receiver((n) => (n === 0 ? { status: 500 } : n === 1 ? { status: 200, hang: true } : { status: 200 }), port);
      await r.waitFor(3, 20_000);
      const done = await settled(ctx, endpoint.id, delivery.id);
      assert.equal(done.status, 'delivered');
      assert.deepEqual(new Set(r.received.map((x) => x.headers['webhook-id'])), new Set([delivery.id]));
      for (const got of r.received) verified(endpoint.secret, got);
      const attempts = done.attempts as Array<Record<string, any>>;
      const refused = attempts.filter((a) => a.status_code === null && /ECONNREFUSED/.test(a.error));
      assert.ok(refused.length >= 1, JSON.stringify(attempts));
      const rest = attempts.slice(refused.length);
      assert.deepEqual(
        rest.map((a) => a.status_code),
        [500, null, 200],
      );
      assert.match(rest[1].error, /timed out after 3 s/);
      assert.ok(attempts.slice(0, -1).every((a) => typeof a.next_attempt_at === 'number'));
      assert.equal(attempts.at(-1)!.next_attempt_at, null);
      assert.ok(attempts.every((a) => Number.isInteger(a.latency_ms)));
      assert.deepEqual(
        attempts.map((a) => a.attempt),
        attempts.map((_, i) => i + 1),
      );
    });

    test("a 429's Retry-After is honoured over the schedule", async () => {
      const r = await receiver((n) => (n === 0 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 204 }));
      const endpoint = await createEndpoint(ctx, { url: r.url, events: ['*'] });
      await sendTest(ctx, endpoint.id);
      const [first, second] = await r.waitFor(2, 10_000);
      assert.ok(second.at - first.at >= 1900, `retried after ${second.at - first.at} ms`);
      assert.equal(first.headers['webhook-id'], second.headers['webhook-id']);
    });

    test('410 disables the endpoint with the reason shown, and nothing more is sent to it', async () => {
      const r = await receiver(() => ({ status: 410 }));
      const endpoint = await createEndpoint(ctx, { url: r.url, events: ['*'] });
      const delivery = await sendTest(ctx, endpoint.id);
      const done = await settled(ctx, endpoint.id, delivery.id);
      assert.equal(done.status, 'dead');
      const get = await ctx().http.get(`/v1/webhook_endpoints/${endpoint.id}`).set(ctx().auth);
      assert.equal(get.body.enabled, false);
      assert.match(get.body.disabled_reason, /410/);
      assert.equal(typeof get.body.disabled_at, 'number');
      const again = await sendTest(ctx, endpoint.id);
      const dead = await settled(ctx, endpoint.id, again.id);
      assert.equal(dead.status, 'dead');
      assert.match(dead.last_error, /disabled/);
      assert.equal(r.received.length, 1);
      const enabled = await ctx().http.patch(`/v1/webhook_endpoints/${endpoint.id}`).set(ctx().auth).send({ enabled: true });
      assert.deepEqual([enabled.body.enabled, enabled.body.disabled_reason, enabled.body.disabled_at], [true, null, null]);
    });

    test('a redirect is not followed, not even to this machine', async () => {
      const target = await receiver();
      const r = await receiver(() => ({ status: 307, headers: { location: `http://localhost:${target.port}/hook` } }));
      const endpoint = await createEndpoint(ctx, { url: r.url, events: ['*'] });
      const delivery = await sendTest(ctx, endpoint.id);
      const failed = await eventually(async () => (await deliveries(ctx, endpoint.id)).find((d) => d.id === delivery.id && d.attempts.length >= 1));
      assert.equal(failed.attempts[0].status_code, 307);
      assert.match(failed.attempts[0].error, /redirects are not followed/);
      assert.equal(target.received.length, 0);
      await ctx().http.delete(`/v1/webhook_endpoints/${endpoint.id}`).set(ctx().auth);
    });

    test('secret rotation: during the overlap both secrets verify; with no overlap only the new one', async () => {
      const r = await receiver();
      const endpoint = await createEndpoint(ctx, { url: r.url, events: ['*'] });
      const rotated = await ctx().http.post(`/v1/webhook_endpoints/${endpoint.id}/rotate_secret`).set(ctx().auth).send({ expire_in_seconds: 3600 });
      assertMatchesSpec(rotated, 'rotateWebhookSecret');
      assert.equal(rotated.status, 200, rotated.text);
      assert.notEqual(rotated.body.secret, endpoint.secret);
      assert.equal(typeof rotated.body.previous_secret_expires_at, 'number');
      await sendTest(ctx, endpoint.id);
      const [overlap] = await r.waitFor(1);
      verified(endpoint.secret, overlap);
      verified(rotated.body.secret, overlap);
      assert.equal(String(overlap.headers['webhook-signature']).split(' ').length, 2);

      const final = await ctx().http.post(`/v1/webhook_endpoints/${endpoint.id}/rotate_secret`).set(ctx().auth).send({ expire_in_seconds: 0 });
      assert.equal(final.body.previous_secret_expires_at, null);
      await sendTest(ctx, endpoint.id);
      const [, after] = await r.waitFor(2);
      verified(final.body.secret, after);
      assert.throws(() => verified(rotated.body.secret, after));
      assert.throws(() => verified(endpoint.secret, after));
    });

    test('endpoints hear only the event types and agents they asked for', async () => {
      const auth = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
      await createAgent(ctx, { name: 'ok-agent', model: { provider: 'fake', script: [{ text: 'fine' }] } }, auth);
      await createAgent(ctx, { name: 'bad-agent', model: { provider: 'fake', script: [{ error: { status: 400, message: 'nope' } }] } }, auth);
      const all = await receiver();
      const failedOnly = await receiver();
      const badAgentOnly = await receiver();
      await createEndpoint(ctx, { url: all.url, events: ['*'] }, auth);
      await createEndpoint(ctx, { url: failedOnly.url, events: ['response.failed'] }, auth);
      await createEndpoint(ctx, { url: badAgentOnly.url, events: ['response.completed', 'response.failed'], agents: ['bad-agent'] }, auth);
      const ok = await ctx().http.post('/v1/responses').set(auth).send({ model: 'ok-agent', input: 'x' });
      const bad = await ctx().http.post('/v1/responses').set(auth).send({ model: 'bad-agent', input: 'x' });
      assert.equal(bad.body.palai_status, 'failed', bad.text);
      await all.waitFor(2);
      await failedOnly.waitFor(1);
      await badAgentOnly.waitFor(1);
      await sleep(500);
      const types = (r: Receiver) =>
        r.received
          .map((x) => JSON.parse(x.body))
          .map((b) => `${b.type}:${b.data.response.id}`)
          .sort();
      assert.deepEqual(types(all), [`response.completed:${ok.body.id}`, `response.failed:${bad.body.id}`].sort());
      assert.deepEqual(types(failedOnly), [`response.failed:${bad.body.id}`]);
      assert.deepEqual(types(badAgentOnly), [`response.failed:${bad.body.id}`]);
    });

    test('one slow endpoint holds at most its concurrency and never delays another endpoint', async () => {
      const slow = await receiver(() => ({ status: 204, delayMs: 700 }));
      const fast = await receiver();
      const slowEndpoint = await createEndpoint(ctx, { url: slow.url, events: ['*'] });
      const fastEndpoint = await createEndpoint(ctx, { url: fast.url, events: ['*'] });
      for (let i = 0; i < 8; i++) await sendTest(ctx, slowEndpoint.id);
      await slow.waitFor(1);
      const sent = Date.now();
      await sendTest(ctx, fastEndpoint.id);
      const [got] = await fast.waitFor(1, 5000);
      assert.ok(slow.received.length < 8, 'the fast endpoint was served while the slow one still had a backlog');
      assert.ok(got.at - sent < 1500, `the fast endpoint waited ${got.at - sent} ms`);
      await slow.waitFor(8, 20_000);
      assert.ok(slow.maxInFlight <= SETTINGS.webhookConcurrency, `at most ${SETTINGS.webhookConcurrency} at once, saw ${slow.maxInFlight}`);
    });

    test('operators list attempts, resend one delivery under its id, and replay dead ones in a window', async () => {
      let failing = true;
      const r = await receiver(() => ({ status: failing ? 400 : 204 }));
      const endpoint = await createEndpoint(ctx, { url: r.url, events: ['*'] });
      const from = Math.floor(Date.now() / 1000);
      const first = await sendTest(ctx, endpoint.id);
      const second = await sendTest(ctx, endpoint.id);
      const deadOne = await eventually(async () => {
        const list = await deliveries(ctx, endpoint.id);
        return list.filter((d) => d.status === 'dead').length === 2 && list;
      }, 30_000);
      assert.deepEqual(
        deadOne.map((d) => d.id),
        [second.id, first.id],
        'newest first',
      );
      assert.equal(deadOne[0].attempts.length, SETTINGS.webhookRetryScheduleMs.length + 1);
      assert.match(deadOne[0].last_error, /gave up after 9 attempts: answered 400/);

      const deadOnly = await ctx().http.get(`/v1/webhook_endpoints/${endpoint.id}/deliveries?status=dead`).set(ctx().auth);
      assert.equal(deadOnly.body.data.length, 2, deadOnly.text);
      const none = await ctx().http.get(`/v1/webhook_endpoints/${endpoint.id}/deliveries?status=delivered`).set(ctx().auth);
      assert.equal(none.body.data.length, 0, none.text);
      assertProblem(await ctx().http.get(`/v1/webhook_endpoints/${endpoint.id}/deliveries?status=lost`).set(ctx().auth), 400, 'validation-failed');
      const page = await ctx().http.get(`/v1/webhook_endpoints/${endpoint.id}/deliveries?limit=1`).set(ctx().auth);
      assert.deepEqual([page.body.data.length, page.body.has_more, page.body.last_id], [1, true, second.id]);
      const next = await ctx().http.get(`/v1/webhook_endpoints/${endpoint.id}/deliveries?limit=1&after=${second.id}`).set(ctx().auth);
      assert.deepEqual(
        next.body.data.map((d: { id: string }) => d.id),
        [first.id],
      );
      const one = await ctx().http.get(`/v1/webhook_endpoints/${endpoint.id}/deliveries/${first.id}`).set(ctx().auth);
      assertMatchesSpec(one, 'getWebhookDelivery');

      failing = false;
      const before = r.received.length;
      const resend = () =>
        ctx().http.post(`/v1/webhook_endpoints/${endpoint.id}/deliveries/${first.id}/resend`).set(ctx().auth).set('Idempotency-Key', 'resend-once');
      const resent = await resend();
      assertMatchesSpec(resent, 'resendWebhookDelivery');
      assert.equal(resent.status, 202, resent.text);
      await r.waitFor(before + 1);
      assert.equal(r.received.at(-1)!.headers['webhook-id'], first.id);
      assert.equal((await settled(ctx, endpoint.id, first.id)).status, 'delivered');
      // The same resend again (a client whose answer was lost): answered for it, not sent a third time.
      const repeated = await resend();
      assertMatchesSpec(repeated, 'resendWebhookDelivery');
      assert.equal(repeated.status, 202, repeated.text);
      assert.equal(repeated.headers['idempotent-replayed'], 'true');
      assert.equal((await settled(ctx, endpoint.id, first.id)).status, 'delivered');
      assert.equal(r.received.length, before + 1);

      const replay = await ctx()
        .http.post(`/v1/webhook_endpoints/${endpoint.id}/replay`)
        .set(ctx().auth)
        .send({ from, to: Math.floor(Date.now() / 1000) });
      assertMatchesSpec(replay, 'replayWebhookDeliveries');
      assert.deepEqual(replay.body, { object: 'webhook_endpoint.replay', requeued: 1 });
      await r.waitFor(before + 2);
      assert.equal(r.received.at(-1)!.headers['webhook-id'], second.id);
      assert.equal((await settled(ctx, endpoint.id, second.id)).status, 'delivered');
      assertProblem(await ctx().http.post(`/v1/webhook_endpoints/${endpoint.id}/replay`).set(ctx().auth).send({ from: 10, to: 5 }), 400, 'invalid-request');
      assertProblem(await ctx().http.post(`/v1/webhook_endpoints/${endpoint.id}/deliveries/dlv_nope/resend`).set(ctx().auth), 404, 'not-found');
      const text = JSON.stringify(await deliveries(ctx, endpoint.id));
      assert.ok(!text.includes(endpoint.secret));
    });
  },
  SETTINGS,
);

describeEachStore(
  'webhooks: an endpoint failing for longer than the configured period',
  (ctx) => {
    test('is disabled with the reason shown', async () => {
      const r = await receiver(() => ({ status: 500 }));
      const endpoint = await createEndpoint(ctx, { url: r.url, events: ['*'] });
      await sendTest(ctx, endpoint.id);
      const disabled = await eventually(async () => {
        const get = await ctx().http.get(`/v1/webhook_endpoints/${endpoint.id}`).set(ctx().auth);
        return get.body.enabled === false && get.body;
      });
      assert.match(disabled.disabled_reason, /failed since .* longer than 1 s; the latest: answered 500/);
    });
  },
  { ...SETTINGS, webhookDisableAfterSeconds: 1 },
);

describeEachStore(
  'webhooks: SSRF without the allow-list',
  (ctx) => {
    test('loopback, private, link-local, metadata, mapped IPv6 and names resolving to loopback are refused on the address connected to', async () => {
      const r = await receiver();
      const urls = [
        `http://127.0.0.1:${r.port}/hook`,
        `http://[::1]:${r.port}/hook`,
        `http://[::ffff:127.0.0.1]:${r.port}/hook`,
        `http://localhost:${r.port}/hook`,
        'http://10.0.0.1/hook',
        'http://169.254.169.254/latest/meta-data/',
        'http://100.64.0.1/hook',
        'http://224.0.0.1/hook',
      ];
      for (const url of urls) {
        const endpoint = await createEndpoint(ctx, { url, events: ['*'] });
        const delivery = await sendTest(ctx, endpoint.id);
        const dead = await settled(ctx, endpoint.id, delivery.id);
        assert.equal(dead.status, 'dead', url);
        assert.match(dead.last_error, /refused/, `${url}: ${dead.last_error}`);
        assert.equal(dead.attempts[0].status_code, null);
      }
      assert.equal(r.received.length, 0, 'nothing reached the receiver');
    });
  },
  { ...SETTINGS, egressAllowHosts: [] },
);

test('an allow-listed CIDR block lets its addresses through, as literals and as what a name resolves to; others stay refused', async () => {
  const r = await receiver();
  const byBlock = createEgressFetch({ allowHosts: ['127.0.0.0/8'], resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
  const other = createEgressFetch({ allowHosts: ['10.0.0.0/8'] });
  try {
    assert.equal((await byBlock(r.url, { method: 'POST', body: '{}' })).status, 204);
    assert.equal((await byBlock(`http://receiver.test:${r.port}/hook`, { method: 'POST', body: '{}' })).status, 204);
    await assert.rejects(other(r.url, { method: 'POST', body: '{}' }), /refused/);
    assert.throws(() => createEgressFetch({ allowHosts: ['10.0.0.0/99'] }), /not a CIDR block/);
  } finally {
    await byBlock.close();
    await other.close();
  }
});
