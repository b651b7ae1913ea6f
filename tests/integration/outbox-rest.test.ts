// The outbox over REST, on both stores: a project's deliveries of every kind,
// newest first and paged, without their payloads; one by id; a dead one put
// back (and a pending one left alone); another project sees none of them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { until } from '../support/until.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

await describeEachStore(
  'outbox deliveries over REST',
  (ctx) => {
    const get = async (path: string, operationId: 'listOutboxDeliveries' | 'getOutboxDelivery', auth = ctx().auth) => {
      const res = await ctx().http.get(path).set(auth);
      if (res.status === 200) assertMatchesSpec(res, operationId);
      return res;
    };
    let deadId = '';
    let receiver: Receiver;

    before(async () => {
      // Two failures (the attempt and its one retry): dead. After that it holds every request, so a redelivery stays pending.
      receiver = await startReceiver((n) => (n < 2 ? { status: 500 } : { status: 204, hang: true }));
      await createAgent(ctx, { name: 'announced', model: { provider: 'fake' } });
      const endpoint = await ctx()
        .http.post('/v1/webhook_endpoints')
        .set(ctx().auth)
        .send({ url: receiver.url, events: ['response.completed'] });
      assert.equal(endpoint.status, 201, endpoint.text);
      assert.equal((await ctx().http.post('/v1/responses').set(ctx().auth).send({ model: 'announced', input: 'hi' })).status, 200);
      // Deliveries of a kind nobody carries out here stay pending: they page the list.
      for (const n of [1, 2, 3])
        await ctx().hub.api.outbox.enqueue({ projectId: ctx().projectId, consumer: 'nobody', target: `t${n}`, payload: { secret_looking: 'never shown' } });
      const dead = await until('the webhook delivery is dead', async () => {
        const res = await get('/v1/outbox_deliveries?status=dead&consumer=webhook', 'listOutboxDeliveries');
        return res.body.data[0];
      });
      deadId = dead.id;
    });
    after(() => receiver.close());

    test('the list: every kind, newest first, paged, filtered, never a payload', async () => {
      const all = await get('/v1/outbox_deliveries', 'listOutboxDeliveries');
      assert.equal(all.status, 200);
      assert.deepEqual(
        all.body.data.map((d: { consumer: string }) => d.consumer),
        ['nobody', 'nobody', 'nobody', 'webhook'],
      );
      assert.ok(!JSON.stringify(all.body).includes('never shown'), 'payloads stay in the store');
      const ids = all.body.data.map((d: { id: string }) => d.id);
      assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
      const dead = all.body.data.at(-1);
      assert.equal(dead.status, 'dead');
      assert.equal(dead.attempts, 2);
      assert.match(dead.last_error, /500/);
      assert.equal(dead.next_attempt_at, null);
      assert.ok(dead.dead_at >= dead.created_at);

      const first = await get('/v1/outbox_deliveries?limit=2', 'listOutboxDeliveries');
      assert.deepEqual(
        first.body.data.map((d: { id: string }) => d.id),
        ids.slice(0, 2),
      );
      assert.equal(first.body.has_more, true);
      const next = await get(`/v1/outbox_deliveries?limit=2&after=${first.body.last_id}`, 'listOutboxDeliveries');
      assert.deepEqual(
        next.body.data.map((d: { id: string }) => d.id),
        ids.slice(2),
      );
      assert.equal(next.body.has_more, false);
      const pending = await get('/v1/outbox_deliveries?status=pending', 'listOutboxDeliveries');
      assert.equal(pending.body.data.length, 3);
      assert.ok(pending.body.data.every((d: { next_attempt_at: number | null }) => typeof d.next_attempt_at === 'number'));
    });

    test('one by id; a dead delivery is put back once, a pending one is left alone', async () => {
      const one = await get(`/v1/outbox_deliveries/${deadId}`, 'getOutboxDelivery');
      assert.equal(one.body.id, deadId);
      const redeliver = (key?: string) => {
        const req = ctx().http.post(`/v1/outbox_deliveries/${deadId}/redeliver`).set(ctx().auth);
        return key ? req.set('Idempotency-Key', key) : req;
      };
      const back = await redeliver('put-back-once');
      assertMatchesSpec(back, 'redeliverOutboxDelivery');
      assert.equal(back.status, 202, back.text);
      assert.equal(back.body.status, 'pending');
      assert.equal(back.body.dead_at, null);
      await receiver.waitFor(3, 30_000);
      // The same request again (a client whose answer was lost): answered for that redelivery, not put back twice.
      const repeated = await redeliver('put-back-once');
      assert.equal(repeated.status, 202, repeated.text);
      assert.equal(repeated.headers['idempotent-replayed'], 'true');
      assert.equal(repeated.body.id, deadId);
      // Another request while it is being tried: left alone.
      assertProblem(await redeliver(), 409, 'invalid-state');
      assertProblem(await redeliver('another-key'), 409, 'invalid-state');
      assert.equal(receiver.received.length, 3, 'sent once more, not twice');
    });

    test('bad input and other projects: problems, and nothing of this project', async () => {
      assertProblem(await ctx().http.get('/v1/outbox_deliveries?status=lost').set(ctx().auth), 400, 'validation-failed');
      assertProblem(await ctx().http.get('/v1/outbox_deliveries?limit=0').set(ctx().auth), 400, 'validation-failed');
      assertProblem(await ctx().http.get('/v1/outbox_deliveries/dlv_nothing').set(ctx().auth), 404, 'not-found');
      assertProblem(await ctx().http.post('/v1/outbox_deliveries/dlv_nothing/redeliver').set(ctx().auth), 404, 'not-found');
      const other = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
      assert.deepEqual((await get('/v1/outbox_deliveries', 'listOutboxDeliveries', other)).body.data, []);
      assertProblem(await ctx().http.get(`/v1/outbox_deliveries/${deadId}`).set(other), 404, 'not-found');
      assertProblem(await ctx().http.post(`/v1/outbox_deliveries/${deadId}/redeliver`).set(other), 404, 'not-found');
    });
  },
  { secretKey: 'outbox-rest-tests-secret-key-0123456789', webhookRetryScheduleMs: [50] },
);
