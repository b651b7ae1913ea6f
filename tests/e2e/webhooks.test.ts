// Webhooks survive a crash: a response completes while its endpoint's receiver
// is down, the `palai serve` that ran it is killed with SIGKILL, the receiver
// comes up, and another `palai serve` on the same database delivers the event,
// signed, under the delivery id it was written with. Nothing but the store
// carries the delivery across the crash.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { cleanUpProcesses } from '../support/cli.js';
import { postgresUnavailable } from '../support/stores.js';
import { freePort, startReceiver, verified, type Receiver } from '../support/webhook-receiver.js';
import { api, baseOf, createAgent, kill9, logsOf, useCluster, waitUntil } from './cluster.js';

const postgresReason = await postgresUnavailable();
const receivers: Receiver[] = [];

after(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  cleanUpProcesses();
});

describe('webhooks across a SIGKILL', { skip: postgresReason ?? false }, () => {
  const cluster = useCluster({
    PALAI_SECRET_KEY: 'e2e-webhook-secret-key-0123456789',
    PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1',
    PALAI_WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 20 }, () => '2s').join(','),
  });

  test('an event committed while the receiver was down is delivered after the process is killed and another starts', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const first = await cluster.start('first', 'all');
    const base = baseOf(first);
    await createAgent(base, { name: 'notifier', model: { provider: 'fake', script: [{ text: 'done' }] } });
    const created = await api(base, 'POST', '/v1/webhook_endpoints', { url: `http://127.0.0.1:${port}/hook`, events: ['response.completed'] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const endpoint = created.body as { id: string; secret: string };
    const response = await api(base, 'POST', '/v1/responses', { model: 'notifier', input: 'go' });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.status, 'completed');
    // The receiver is down: the first attempt fails and its failure is recorded (the delivery is no longer leased).
    const failed = await waitUntil('the first attempt fails', 10_000, async () => {
      const list = await api(base, 'GET', `/v1/webhook_endpoints/${endpoint.id}/deliveries`);
      return list.body.data.find((d: { last_error: string | null }) => d.last_error !== null);
    });
    assert.match(failed.last_error, /ECONNREFUSED/);
    await kill9(first);

    const receiver = await startReceiver(() => ({ status: 204 }), port);
    receivers.push(receiver);
    const second = await cluster.start('second', 'all');
    const [got] = await receiver.waitFor(1, 90_000).catch((error) => {
      throw new Error(`${error.message}\n${logsOf(first, second)}`);
    });
    const body = verified(endpoint.secret, got) as { type: string; data: { response: { id: string } } };
    assert.equal(body.type, 'response.completed');
    assert.equal(body.data.response.id, response.body.id);
    const delivery = await waitUntil('the delivery is recorded as delivered', 10_000, async () => {
      const again = await api(baseOf(second), 'GET', `/v1/webhook_endpoints/${endpoint.id}/deliveries`);
      return again.body.data.find((d: { status: string }) => d.status === 'delivered');
    });
    assert.equal(got.headers['webhook-id'], delivery.id);
    assert.equal(delivery.id, failed.id, 'the delivery written before the crash, under its id');
    assert.ok(receiver.received.every((r) => r.headers['webhook-id'] === delivery.id));
  });
});
