// A subscription to one response and a status change of it that race: every
// change is either announced to the subscription or seen by a read of the
// status after the subscription is made (an A2A push config given with the
// message that starts a task subscribes while the run goes on). Each side is
// held open in its own transaction while the other is tried.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { subscribe } from '../../core/outbox/subscriptions.js';
import { changeStatus, finishAtOnce } from '../../core/responses/status-writer.js';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';

/** A promise and the function that settles it. */
function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Whether `promise` is still pending after `ms`. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const pending = Symbol('pending');
  return (await Promise.race([promise.then(() => null), sleep(ms, pending)])) === pending;
}

await describeEachStore('a subscription to one response against its status changes', (ctx) => {
  const waitingResponse = async (): Promise<string> => {
    const body = await respond(ctx, { model: 'asker', input: 'go' });
    assert.equal(body.palai_status, 'waiting_for_input');
    return body.id;
  };
  const deliveries = async (subscriptionId: string) =>
    (
      await ctx().hub.kernel.db.query<{ status: string }>("SELECT payload->>'status' AS status FROM outbox_deliveries WHERE subscription_id = $1", [
        subscriptionId,
      ])
    ).rows.map((r) => r.status);
  const input = (responseId: string) => ({ projectId: ctx().projectId, consumer: 'race-test', target: 't', statuses: ['canceled' as const], responseId });

  before(async () => {
    await createAgent(ctx, {
      name: 'asker',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }] }, { text: 'ok' }] },
      tools: [{ type: 'builtin', name: 'ask_user' }],
    });
  });

  test('made while a change is in flight, it waits for the change; a read after it sees the change', async () => {
    const responseId = await waitingResponse();
    const { db } = ctx().hub.kernel;
    const held = gate();
    const changed = gate();
    const change = db.transaction(async (tx) => {
      await changeStatus(tx, { projectId: ctx().projectId, responseId, leaseToken: null }, { status: 'canceled', output: [], error: null });
      changed.open();
      await held.opened;
    });
    await changed.opened;
    const subscribing = ctx().hub.api.outbox.subscribe(input(responseId));
    try {
      assert.ok(await pendingAfter(subscribing, 300), 'the subscription waits for the change in flight');
    } finally {
      held.open();
    }
    await change;
    const subscriptionId = await subscribing;
    assert.equal((await ctx().hub.api.responses.get(ctx().projectId, responseId)).status, 'canceled', 'a read after the subscription sees the change');
    assert.deepEqual(await deliveries(subscriptionId), [], 'the change, committed first, announced nothing to it');
  });

  /** Holds a subscription to the response open while `change` is tried, asserts the change waits for it, then lets it commit. */
  const changeWhileSubscribing = async <T>(responseId: string, change: () => Promise<T>): Promise<{ subscriptionId: string; changed: T }> => {
    const held = gate();
    const made = gate();
    let subscriptionId = '';
    const subscribing = ctx().hub.kernel.db.transaction(async (tx) => {
      subscriptionId = await subscribe(tx, input(responseId));
      made.open();
      await held.opened;
    });
    await made.opened;
    const changing = change();
    try {
      assert.ok(await pendingAfter(changing, 300), 'the change waits for the subscription being made');
    } finally {
      held.open();
    }
    await subscribing;
    return { subscriptionId, changed: await changing };
  };

  test('a change tried while the subscription is being made waits for it, then is announced to it', async () => {
    const responseId = await waitingResponse();
    const { subscriptionId, changed } = await changeWhileSubscribing(responseId, () =>
      ctx()
        .http.post(`/v1/responses/${responseId}/cancel`)
        .set(ctx().auth)
        .then((res) => res),
    );
    assert.equal(changed.status, 200);
    assert.deepEqual(await deliveries(subscriptionId), ['canceled'], 'the change is announced to the subscription');
  });

  test("a worker's end in one statement, tried while the subscription is being made, waits for it, then is announced to it", async () => {
    const responseId = await waitingResponse();
    // No transaction and no lock taken first: the statement's snapshot predates the subscription's commit.
    const { subscriptionId, changed } = await changeWhileSubscribing(responseId, () =>
      finishAtOnce(ctx().hub.kernel.db, { projectId: ctx().projectId, responseId, leaseToken: null }, { status: 'canceled', output: [], error: null }),
    );
    assert.equal(changed.status, 'canceled');
    assert.deepEqual(await deliveries(subscriptionId), ['canceled'], 'the end is announced to the subscription');
  });
});
