// The outbox as a specification, on both stores: deliveries exist exactly when
// the event they announce does, every one is delivered at least once (and, with
// healthy consumers, exactly once) by any number of dispatchers, a crashed
// attempt is taken over after its lease under the same delivery id, failures
// back off until the delivery is dead, and operators can put it back.
// Randomness is seeded: PALAI_TEST_SEED=<seed> replays a run.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, describe, test } from 'node:test';
import { Counter, Registry } from 'prom-client';
import { createProject } from '../../core/auth/projects.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { createLogger } from '../../core/logger.js';
import { Metrics } from '../../core/metrics.js';
import { announceStatus, type StatusChangeAnnouncement } from '../../core/outbox/announce.js';
import { backoffCeilingMs, retryDelayMs } from '../../core/outbox/backoff.js';
import { claimDeliveries, completeDelivery, killDelivery, releaseDelivery, retryDelivery } from '../../core/outbox/claims.js';
import { countDeliveries, enqueueDelivery, getDelivery, listDeliveries, purgeDelivered, redeliver } from '../../core/outbox/deliveries.js';
import { OutboxDispatcher, type OutboxDispatcherOptions } from '../../core/outbox/dispatcher.js';
import {
  MAX_ERROR_LENGTH,
  type DeliveryRecord,
  type DeliveryResult,
  type OutboxConsumer,
  type OutboxDelivery,
  type OutboxSubscriptionInput,
} from '../../core/outbox/outbox-port.js';
import { listSubscriptions, subscribe, unsubscribe } from '../../core/outbox/subscriptions.js';
import type { Db, StoreKind } from '../../core/store/db.js';
import { migrate } from '../../core/store/migrate.js';
import { cleanUpProcesses, runPalai, userEnv } from '../support/cli.js';
import { random, testSeed } from '../support/seeded-random.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';

const SEED = testSeed();
console.log(`outbox tests: PALAI_TEST_SEED=${SEED}`);

const DELIVERY_ID = /^dlv_[0-9a-hjkmnp-tv-z]{26}$/;
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const silent = createLogger('silent');

describe('backoff', () => {
  const options = { baseMs: 1000, capMs: 10_000 };

  test('the ceiling doubles from the base with each failed attempt, up to the cap', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((n) => backoffCeilingMs(n, options)),
      [1000, 2000, 4000, 8000, 10_000, 10_000],
    );
    assert.equal(backoffCeilingMs(100_000, options), 10_000);
  });

  test('full jitter: the delay is drawn uniformly below the ceiling', () => {
    const draw = random(SEED);
    const delays = Array.from({ length: 1000 }, () => retryDelayMs(3, { ...options, random: draw }));
    assert.ok(delays.every((d) => Number.isInteger(d) && d >= 0 && d < 4000));
    assert.ok(Math.min(...delays) < 400 && Math.max(...delays) > 3600, 'draws spread over the whole range');
    assert.equal(retryDelayMs(3, { ...options, random: () => 0 }), 0);
  });

  test("a consumer's retryAfterMs wins, even above the cap; a nonsensical one is ignored", () => {
    const fixed = { ...options, random: () => 0.5 };
    assert.equal(retryDelayMs(1, fixed, 25_000), 25_000);
    assert.equal(retryDelayMs(1, fixed, 0), 0);
    assert.equal(retryDelayMs(1, fixed, -5), 500);
    assert.equal(retryDelayMs(1, fixed, Number.NaN), 500);
  });
});

/** A consumer that records every attempt and answers with `behaviour`. */
function recorder(name: string, behaviour: (delivery: OutboxDelivery, signal: AbortSignal) => Promise<DeliveryResult> = async () => ({ kind: 'delivered' })) {
  const calls: Array<OutboxDelivery & { at: number }> = [];
  const consumer: OutboxConsumer = {
    name,
    async deliver(delivery, signal) {
      calls.push({ ...delivery, at: Date.now() });
      return behaviour(delivery, signal);
    },
  };
  return { consumer, calls };
}

/** A consumer whose attempts run until their signal aborts, then fail with its reason; `reasons` has each abort's message. */
function untilAborted(name: string) {
  const reasons: string[] = [];
  const waits = recorder(
    name,
    (_delivery, signal) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => {
          reasons.push(String(signal.reason?.message));
          reject(signal.reason);
        });
      }),
  );
  return { waits, reasons };
}

/** Resolves with the probe's first truthy answer; the test's own timeout bounds the wait. */
async function eventually<T>(probe: () => Promise<T | null | undefined | false>, signal: AbortSignal): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value) return value;
    signal.throwIfAborted();
    await sleep(15);
  }
}

async function suite(kind: StoreKind) {
  const unavailable = kind === 'postgres' ? await postgresUnavailable() : null;
  describe(`outbox [${kind}]`, { skip: unavailable ?? false, timeout: 120_000 }, () => {
    let database: TestDatabase;
    let db: Db;
    let projectId: string;
    let otherProjectId: string;
    let unique = 0;
    /** A consumer name no other test uses, so no dispatcher takes another test's deliveries. */
    const consumerName = (label: string) => `${label}-${++unique}`;
    /** Subscriptions match by project: each test that announces gets its own. */
    const freshProject = async () => (await createProject(db, `outbox-${++unique}`)).id;
    const dispatchers: OutboxDispatcher[] = [];

    const dispatcher = (options: Partial<OutboxDispatcherOptions> = {}) => {
      const d = new OutboxDispatcher({ db, logger: silent, pollIntervalMs: 20, leaseSeconds: 30, ...options });
      dispatchers.push(d);
      return d;
    };
    const row = async (id: string): Promise<DeliveryRecord> => {
      const found = await getDelivery(db, id);
      assert.ok(found, `delivery ${id} exists`);
      return found;
    };
    const dbNow = async (): Promise<number> => (await db.query<{ now: Date }>('SELECT now() AS now')).rows[0].now.getTime();
    const makeDue = (id: string) => db.query('UPDATE outbox_deliveries SET next_attempt_at = now() WHERE id = $1', [id]);
    const enqueue = (consumer: string, payload: Record<string, unknown> = { hello: 'world' }) =>
      enqueueDelivery(db, { projectId, consumer, target: 'target-1', payload });
    const announcement = (projectId: string, overrides: Partial<StatusChangeAnnouncement> = {}): StatusChangeAnnouncement => ({
      projectId,
      responseId: 'resp_1',
      agentId: 'agt_1',
      sequence: 7,
      status: 'completed',
      ...overrides,
    });

    before(async () => {
      database = await openTestDatabase(kind);
      db = database.db;
      await migrate(db);
      projectId = (await createProject(db, 'outbox')).id;
      otherProjectId = (await createProject(db, 'outbox-other')).id;
    });
    afterEach(async () => {
      for (const d of dispatchers.splice(0)) await d.stop();
    });
    after(async () => {
      cleanUpProcesses();
      await database.drop();
    });

    test('a status change announced in a transaction that rolls back leaves no delivery behind', async () => {
      const consumer = consumerName('rollback');
      const projectId = await freshProject();
      await subscribe(db, { projectId, consumer, target: 't', statuses: ['completed'] });
      await assert.rejects(
        db.transaction(async (tx) => {
          assert.equal((await announceStatus(tx, announcement(projectId, { responseId: 'resp_rolled_back' }))).length, 1);
          await enqueueDelivery(tx, { projectId, consumer, target: 't', payload: { direct: true } });
          throw new Error('the event write failed');
        }),
        /the event write failed/,
      );
      assert.deepEqual((await listDeliveries(db, { consumer, limit: 10 })).length, 0);
    });

    test('a committed announcement writes one delivery per matching subscription and none for the others', async () => {
      const consumer = consumerName('match');
      const projectId = await freshProject();
      const sub = (target: string, extra: { statuses?: Array<'completed' | 'failed'>; responseId?: string; agentId?: string; project?: string } = {}) =>
        subscribe(db, {
          projectId: extra.project ?? projectId,
          consumer,
          target,
          statuses: extra.statuses ?? ['completed'],
          responseId: extra.responseId,
          agentId: extra.agentId,
        });
      const every = await sub('every', { statuses: ['completed', 'failed'] });
      const thisResponse = await sub('this-response', { responseId: 'resp_a' });
      const thisAgent = await sub('this-agent', { agentId: 'agt_a' });
      await sub('other-response', { responseId: 'resp_b' });
      await sub('other-agent', { agentId: 'agt_b' });
      await sub('other-status', { statuses: ['failed'] });
      await sub('other-project', { project: otherProjectId });

      const before = Date.now();
      const ids = await db.transaction(async (tx) => announceStatus(tx, announcement(projectId, { responseId: 'resp_a', agentId: 'agt_a', sequence: 12 })));
      const afterwards = Date.now();
      assert.equal(ids.length, 3);
      const written = await listDeliveries(db, { consumer, limit: 50 });
      assert.deepEqual(new Set(written.map((d) => d.id)), new Set(ids));
      assert.deepEqual(new Set(written.map((d) => d.subscriptionId)), new Set([every, thisResponse, thisAgent]));
      assert.deepEqual(new Set(written.map((d) => d.target)), new Set(['every', 'this-response', 'this-agent']));
      for (const d of written) {
        assert.match(d.id, DELIVERY_ID);
        // Minted in SQL, in the shape of core/ids.ts: the body starts with the creation time in milliseconds.
        const ms = [...d.id.slice(4, 14)].reduce((value, ch) => value * 32 + CROCKFORD.indexOf(ch), 0);
        assert.ok(ms >= before - 5000 && ms <= afterwards + 5000, `id time ${ms} is the time of writing`);
        assert.deepEqual(d.payload, { response_id: 'resp_a', sequence: 12, status: 'completed' });
        assert.equal(d.projectId, projectId);
        assert.equal(d.responseId, 'resp_a');
        assert.equal(d.eventSequence, 12);
        assert.equal(d.status, 'pending');
        assert.equal(d.attempts, 0);
      }
      assert.equal((await listDeliveries(db, { projectId: otherProjectId, consumer, limit: 10 })).length, 0);
      // A status nobody subscribed to, and a project nobody subscribed in, write nothing.
      assert.deepEqual(await announceStatus(db, announcement(projectId, { responseId: 'resp_a', status: 'in_progress', sequence: 13 })), []);
      assert.deepEqual(await announceStatus(db, announcement(await freshProject())), []);
    });

    test('announcing the same event twice writes one delivery; the next event writes another', async () => {
      const consumer = consumerName('twice');
      const projectId = await freshProject();
      await subscribe(db, { projectId, consumer, target: 't', statuses: ['waiting_for_approval'] });
      const change = announcement(projectId, { responseId: 'resp_twice', status: 'waiting_for_approval', sequence: 3 });
      assert.equal((await announceStatus(db, change)).length, 1);
      assert.deepEqual(await announceStatus(db, change), []);
      await db.transaction((tx) => announceStatus(tx, change));
      assert.equal((await listDeliveries(db, { consumer, limit: 10 })).length, 1);
      assert.equal((await announceStatus(db, { ...change, sequence: 9 })).length, 1);
      assert.equal((await listDeliveries(db, { consumer, limit: 10 })).length, 2);
    });

    test('subscriptions refuse unknown statuses, list by consumer and target, and stop announcing once removed', async () => {
      const consumer = consumerName('subs');
      const projectId = await freshProject();
      for (const statuses of [[], ['done']] as unknown as OutboxSubscriptionInput['statuses'][]) {
        await assert.rejects(
          subscribe(db, { projectId, consumer, target: 't', statuses }),
          (e: unknown) => e instanceof PalaiError && e.slug === 'invalid-request',
        );
      }
      const a = await subscribe(db, { projectId, consumer, target: 'a', statuses: ['failed', 'failed', 'timed_out'] });
      const b = await subscribe(db, { projectId, consumer, target: 'b', statuses: ['failed'], responseId: 'resp_x', agentId: 'agt_x' });
      const listed = await listSubscriptions(db, projectId, { consumer });
      assert.deepEqual(
        listed.map((s) => s.id),
        [a, b],
      );
      assert.deepEqual(listed[0].statuses, ['failed', 'timed_out']);
      assert.deepEqual([listed[1].responseId, listed[1].agentId], ['resp_x', 'agt_x']);
      assert.deepEqual(
        (await listSubscriptions(db, projectId, { consumer, target: 'b' })).map((s) => s.id),
        [b],
      );
      assert.deepEqual(await listSubscriptions(db, otherProjectId, { consumer }), []);

      const [written] = await announceStatus(db, announcement(projectId, { status: 'failed', responseId: 'resp_y', sequence: 1 }));
      assert.equal(await unsubscribe(db, otherProjectId, a), false, 'another project cannot remove it');
      assert.equal(await unsubscribe(db, projectId, a), true);
      assert.equal(await unsubscribe(db, projectId, a), false);
      assert.deepEqual(await announceStatus(db, announcement(projectId, { status: 'failed', responseId: 'resp_y', sequence: 2 })), []);
      assert.equal((await row(written)).status, 'pending', 'a delivery already written stays');
    });

    test('an idle dispatcher is woken by the commit of a delivery, not by its poll', async (t) => {
      const { consumer, calls } = recorder(consumerName('wake'));
      await dispatcher({ pollIntervalMs: 10 * 60_000 })
        .register(consumer)
        .start();
      await sleep(50); // its first look found nothing: it sleeps until notified
      const id = await db.transaction((tx) =>
        enqueueDelivery(tx, { projectId, consumer: consumer.name, target: 'queue-1', responseId: 'resp_q', payload: { result: 42 } }),
      );
      await eventually(async () => (await row(id)).status === 'delivered', t.signal);
      assert.equal(calls.length, 1);
      assert.deepEqual([calls[0].id, calls[0].target, calls[0].responseId, calls[0].attempts], [id, 'queue-1', 'resp_q', 1]);
      assert.deepEqual(calls[0].payload, { result: 42 });
      assert.equal(calls[0].eventSequence, null);
    });

    test('a dispatcher claims only for the consumers registered with it, and nothing without any', async (t) => {
      const a = recorder(consumerName('only-a'));
      const bName = consumerName('only-b');
      const forA = await enqueue(a.consumer.name);
      const forB = await enqueue(bName);
      const d = dispatcher();
      await d.start();
      await sleep(150); // several polls
      for (const id of [forA, forB]) {
        const untouched = await row(id);
        assert.deepEqual([untouched.status, untouched.attempts, untouched.leaseOwner], ['pending', 0, null]);
      }
      d.register(a.consumer);
      await eventually(async () => (await row(forA)).status === 'delivered', t.signal);
      await sleep(100);
      const other = await row(forB);
      assert.deepEqual([other.status, other.attempts, other.leaseOwner], ['pending', 0, null]);
    });

    test('a delivery whose dispatcher died mid-attempt is delivered by another after the lease expires, under the same id', async (t) => {
      const { consumer, calls } = recorder(consumerName('crash'));
      const id = await enqueue(consumer.name);
      // The first dispatcher claims and dies: it never settles the attempt.
      const [crashed] = await claimDeliveries(db, { owner: 'crashed-process', consumers: [consumer.name], limit: 10, leaseSeconds: 0.4 });
      assert.equal(crashed.id, id);
      const leaseExpiresAt = (await row(id)).leaseExpiresAt!.getTime();
      await dispatcher().register(consumer).start();
      await eventually(async () => (await row(id)).status === 'delivered', t.signal);
      assert.equal(calls.length, 1);
      assert.equal(calls[0].id, crashed.id, 'one delivery id across both attempts');
      assert.equal(calls[0].attempts, 2, 'the crashed attempt counts');
      assert.ok(calls[0].at >= leaseExpiresAt - 50, 'not taken while the lease was held');
      assert.equal((await row(id)).leaseOwner, null);
    });

    test('stop() aborts a running attempt and hands its delivery back uncounted; another dispatcher delivers it', async (t) => {
      const name = consumerName('stop');
      const hanging = recorder(
        name,
        (_, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
      );
      const id = await enqueue(name);
      const first = dispatcher();
      await first.register(hanging.consumer).start();
      await eventually(async () => hanging.calls.length === 1, t.signal);
      await first.stop();
      const released = await row(id);
      assert.deepEqual([released.status, released.attempts, released.leaseOwner, released.leaseExpiresAt], ['pending', 0, null, null]);
      const healthy = recorder(name);
      await dispatcher().register(healthy.consumer).start();
      await eventually(async () => (await row(id)).status === 'delivered', t.signal);
      assert.deepEqual(
        healthy.calls.map((c) => [c.id, c.attempts]),
        [[id, 1]],
      );
    });

    test('an attempt that ignores its abort does not hold up stop(); after its lease another delivers, and the late finisher records nothing', async (t) => {
      const name = consumerName('hung');
      let finish: (result: DeliveryResult) => void = () => undefined;
      const hung = recorder(name, () => new Promise((resolve) => (finish = resolve)));
      const outcomes = new Counter({ name: 'outcomes', help: 'test', labelNames: ['consumer', 'outcome'], registers: [new Registry()] });
      const id = await enqueue(name);
      const first = dispatcher({ leaseSeconds: 0.4, stopTimeoutMs: 20, metrics: { outboxAttempts: outcomes } });
      await first.register(hung.consumer).start();
      await eventually(async () => hung.calls.length === 1, t.signal);
      await first.stop();
      const healthy = recorder(name);
      await dispatcher().register(healthy.consumer).start();
      await eventually(async () => (await row(id)).status === 'delivered', t.signal);
      assert.deepEqual(
        healthy.calls.map((c) => [c.id, c.attempts]),
        [[id, 2]],
      );
      finish({ kind: 'dead', error: 'too late' });
      const recorded = async () => (await outcomes.get()).values.map((v) => v.labels.outcome);
      await eventually(async () => (await recorded()).length > 0, t.signal);
      assert.deepEqual(await recorded(), ['lease_lost']);
      const final = await row(id);
      assert.deepEqual([final.status, final.lastError], ['delivered', null]);
    });

    test('a long attempt keeps its delivery: its lease is renewed while it runs, and another dispatcher never takes it', async (t) => {
      const name = consumerName('long');
      let release: () => void = () => undefined;
      const slow = recorder(name, () => new Promise((resolve) => (release = () => resolve({ kind: 'delivered' }))));
      const other = recorder(name);
      const id = await enqueue(name);
      await dispatcher({ leaseSeconds: 0.3 }).register(slow.consumer).start();
      await eventually(async () => slow.calls.length === 1, t.signal);
      await dispatcher({ leaseSeconds: 0.3 }).register(other.consumer).start();
      const first = (await row(id)).leaseExpiresAt!.getTime();
      await sleep(1200);
      const later = (await row(id)).leaseExpiresAt!.getTime();
      assert.ok(later > first + 600, `the lease moved on while the attempt ran (${first} → ${later})`);
      assert.ok(later > (await dbNow()), 'and it still holds');
      release();
      await eventually(async () => (await row(id)).status === 'delivered', t.signal);
      assert.equal(other.calls.length, 0, 'the other dispatcher never took it');
      assert.equal((await row(id)).attempts, 1);
    });

    test('an attempt that runs out of time is aborted and retried, with why', async (t) => {
      const name = consumerName('timed');
      const { waits, reasons } = untilAborted(name);
      const id = await enqueue(name);
      await dispatcher({ leaseSeconds: 0.3, attemptTimeoutSeconds: 0.5, backoff: { baseMs: 60_000, random: () => 0.99 } })
        .register(waits.consumer)
        .start();
      await eventually(async () => (await row(id)).lastError !== null, t.signal);
      const after = await row(id);
      assert.deepEqual([after.status, after.attempts, after.lastError], ['pending', 1, 'the attempt ran out of time (0.5 s)']);
      assert.deepEqual(reasons, ['the attempt ran out of time']);
    });

    test('when renewals cannot reach the store, the attempt is aborted as its lease runs out', async (t) => {
      const name = consumerName('unrenewed');
      const { waits, reasons } = untilAborted(name);
      // The store as the dispatcher sees it: every renewal fails, everything else goes through.
      const cutOff: Db = Object.assign(Object.create(db), {
        query: (sql: string, params?: unknown[]) =>
          /SET lease_expires_at = now\(\) \+ make_interval/.test(sql) && !/attempts = d\.attempts \+ 1/.test(sql)
            ? Promise.reject(new Error('connection refused'))
            : db.query(sql, params),
      });
      const id = await enqueue(name);
      const started = Date.now();
      await dispatcher({ db: cutOff, leaseSeconds: 0.4, backoff: { baseMs: 60_000, random: () => 0.99 } })
        .register(waits.consumer)
        .start();
      await eventually(async () => (await row(id)).lastError !== null, t.signal);
      assert.ok(Date.now() - started < 5000, 'aborted within about one lease, not at the attempt time limit');
      // Its lease lapsed in the store first, so this very dispatcher may have claimed it again meanwhile.
      assert.ok(reasons.length >= 1 && reasons.every((r) => r === "the attempt's lease ran out before it could be renewed"), reasons.join('; '));
      assert.equal((await row(id)).lastError, "the attempt's lease ran out before it could be renewed (0.4 s)");
    });

    test('a renewal that finds the claim taken aborts the attempt, which then records nothing', async (t) => {
      const name = consumerName('taken');
      const reasons: string[] = [];
      const outcomes = new Counter({ name: 'outcomes', help: 'test', labelNames: ['consumer', 'outcome'], registers: [new Registry()] });
      const waits = recorder(
        name,
        (_delivery, signal) =>
          new Promise((resolve) => {
            signal.addEventListener('abort', () => {
              reasons.push(String(signal.reason?.message));
              resolve({ kind: 'dead', error: 'should not be recorded' });
            });
          }),
      );
      const id = await enqueue(name);
      await dispatcher({ leaseSeconds: 0.3, metrics: { outboxAttempts: outcomes } })
        .register(waits.consumer)
        .start();
      await eventually(async () => waits.calls.length === 1, t.signal);
      // Another claim of it, as a dispatcher elsewhere would make after a lapse.
      await db.query('UPDATE outbox_deliveries SET lease_token = lease_token + 1, lease_owner = $2 WHERE id = $1', [id, 'elsewhere']);
      const recorded = async () => (await outcomes.get()).values.map((v) => v.labels.outcome);
      await eventually(async () => (await recorded()).length > 0, t.signal);
      assert.deepEqual(await recorded(), ['lease_lost']);
      assert.deepEqual(reasons, ['the delivery was claimed again elsewhere']);
      const final = await row(id);
      assert.deepEqual([final.status, final.leaseOwner, final.lastError], ['pending', 'elsewhere', null]);
    });

    test('three dispatchers over 60 deliveries deliver each exactly once, never one to two at a time', async (t) => {
      const name = consumerName('many');
      const draw = random(SEED);
      const delivered: string[] = [];
      const running = new Set<string>();
      const overlaps: string[] = [];
      const consumer = (): OutboxConsumer => ({
        name,
        async deliver(delivery) {
          if (running.has(delivery.id)) overlaps.push(delivery.id);
          running.add(delivery.id);
          await sleep(Math.floor(draw() * 8));
          running.delete(delivery.id);
          delivered.push(delivery.id);
          return { kind: 'delivered' };
        },
      });
      for (const owner of ['d1', 'd2', 'd3']) await dispatcher({ owner, concurrency: 4, batchSize: 3 }).register(consumer()).start();
      const ids = await db.transaction(async (tx) => {
        const out: string[] = [];
        for (let i = 0; i < 60; i++) out.push(await enqueueDelivery(tx, { projectId, consumer: name, target: `t${i % 5}`, payload: { i } }));
        return out;
      });
      await eventually(async () => (await listDeliveries(db, { consumer: name, status: 'delivered', limit: 100 })).length === 60, t.signal);
      assert.deepEqual(overlaps, []);
      assert.equal(delivered.length, 60);
      assert.deepEqual(new Set(delivered), new Set(ids));
      const rows = await listDeliveries(db, { consumer: name, limit: 100 });
      assert.ok(rows.every((d) => d.attempts === 1 && d.leaseOwner === null));
    });

    test('targets that hang turn slow and free their slots: a healthy target is served while they hang, within maxInFlight', async (t) => {
      const name = consumerName('hang');
      const hung = new Set<string>();
      const served: number[] = [];
      const consumer: OutboxConsumer = {
        name,
        perTargetConcurrency: 1,
        async deliver(delivery, signal) {
          if (delivery.target === 'healthy') {
            served.push(Date.now());
            return { kind: 'delivered' };
          }
          hung.add(delivery.id);
          // Hangs until the dispatcher stops; the attempt is then handed back.
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          return { kind: 'retry', error: 'aborted' };
        },
      };
      await dispatcher({ concurrency: 2, slowAfterMs: 100, maxInFlight: 10 }).register(consumer).start();
      // Eight hanging targets, four times the concurrency: they all get their attempt, two at a time.
      for (let i = 0; i < 8; i++) await enqueueDelivery(db, { projectId, consumer: name, target: `hang-${i}`, payload: { i } });
      await eventually(async () => hung.size === 8, t.signal);
      const sent = Date.now();
      await enqueueDelivery(db, { projectId, consumer: name, target: 'healthy', payload: {} });
      await eventually(async () => served.length === 1, t.signal);
      assert.ok(served[0] - sent < 2000, `the healthy target waited ${served[0] - sent} ms behind eight hanging ones`);
      for (let i = 8; i < 12; i++) await enqueueDelivery(db, { projectId, consumer: name, target: `hang-${i}`, payload: { i } });
      await eventually(async () => hung.size === 10, t.signal);
      await sleep(400);
      assert.equal(hung.size, 10, 'never more than maxInFlight attempts at once');
    });

    test('a failing delivery backs off exponentially up to the cap, dies after its last attempt, and redelivery brings it back', async (t) => {
      let failing = true;
      const { consumer, calls } = recorder(consumerName('backoff'), async () =>
        failing ? { kind: 'retry', error: 'receiver answered 503' } : { kind: 'delivered' },
      );
      // Half of each ceiling (20 s, 40 s, then the 50 s cap): far enough out that only the test makes it due.
      const backoff = { baseMs: 20_000, capMs: 50_000, random: () => 0.5 };
      await dispatcher({ backoff, maxAttempts: 4 }).register(consumer).start();
      let since = await dbNow();
      const id = await enqueue(consumer.name);
      for (const [attempt, delayMs] of [
        [1, 10_000],
        [2, 20_000],
        [3, 25_000],
      ]) {
        const settled = await eventually(async () => {
          const d = await row(id);
          return d.attempts === attempt && d.leaseOwner === null ? d : null;
        }, t.signal);
        const until = await dbNow();
        assert.equal(settled.status, 'pending');
        assert.equal(settled.lastError, 'receiver answered 503');
        const next = settled.nextAttemptAt.getTime();
        assert.ok(next >= since + delayMs && next <= until + delayMs, `attempt ${attempt}: the next one waits ${delayMs} ms`);
        since = await dbNow();
        await makeDue(id);
      }
      const dead = await eventually(async () => {
        const d = await row(id);
        return d.status === 'dead' ? d : null;
      }, t.signal);
      assert.equal(dead.attempts, 4);
      assert.equal(dead.lastError, 'gave up after 4 attempts: receiver answered 503');
      assert.ok(dead.deadAt);
      assert.equal(calls.length, 4);
      assert.ok(calls.every((c, i) => c.id === id && c.attempts === i + 1));

      failing = false;
      assert.equal(await redeliver(db, id), 'requeued');
      await eventually(async () => (await row(id)).status === 'delivered', t.signal);
      assert.deepEqual([calls.length, calls[4].id, calls[4].attempts], [5, id, 1]);
      assert.equal(await redeliver(db, id, otherProjectId), 'not_found', 'not from another project');
      assert.equal(await redeliver(db, 'dlv_nope'), 'not_found');
    });

    test("a thrown error is stored cut short, a consumer's retryAfterMs wins over the backoff, and a dead result ends it at once", async (t) => {
      const answers: Array<() => DeliveryResult> = [
        () => {
          throw new Error(`refused: ${'x'.repeat(2000)}`);
        },
        () => ({ kind: 'retry', error: 'rate limited', retryAfterMs: 600_000 }),
        () => ({ kind: 'dead', error: 'endpoint gone' }),
      ];
      const { consumer } = recorder(consumerName('results'), async (d) => answers[d.attempts - 1]());
      await dispatcher({ backoff: { baseMs: 60_000, capMs: 60_000, random: () => 0.5 } })
        .register(consumer)
        .start();
      const id = await enqueue(consumer.name);
      const settledAt = (attempt: number) =>
        eventually(async () => {
          const d = await row(id);
          return d.attempts === attempt && d.leaseOwner === null ? d : null;
        }, t.signal);

      const thrown = await settledAt(1);
      assert.equal([...thrown.lastError!].length, MAX_ERROR_LENGTH);
      assert.ok(thrown.lastError!.startsWith('refused: xxx'));
      const since = await dbNow();
      await makeDue(id);
      const limited = await settledAt(2);
      const until = await dbNow();
      const next = limited.nextAttemptAt.getTime();
      assert.ok(next >= since + 600_000 && next <= until + 600_000, 'the next attempt waits the ten minutes asked for');
      assert.equal(limited.lastError, 'rate limited');
      await makeDue(id);
      const dead = await eventually(async () => {
        const d = await row(id);
        return d.status === 'dead' ? d : null;
      }, t.signal);
      assert.deepEqual([dead.attempts, dead.lastError], [3, 'endpoint gone']);
    });

    test('a stale lease token can neither complete, retry, kill nor release a delivery claimed again', async () => {
      const consumer = consumerName('fenced');
      const id = await enqueue(consumer);
      const claim = (owner: string) => claimDeliveries(db, { owner, consumers: [consumer], limit: 5, leaseSeconds: 30 });
      const [stale] = await claim('owner-a');
      assert.deepEqual(await claim('owner-b'), [], 'a held lease is not claimed twice');
      await db.query("UPDATE outbox_deliveries SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [id]);
      const [fresh] = await claim('owner-b');
      assert.equal(fresh.id, stale.id);
      assert.ok(fresh.leaseToken > stale.leaseToken);
      assert.equal(await completeDelivery(db, stale), false);
      assert.equal(await retryDelivery(db, stale, 'late', 10), false);
      assert.equal(await killDelivery(db, stale, 'late'), false);
      assert.equal(await releaseDelivery(db, stale), false);
      const held = await row(id);
      assert.deepEqual([held.status, held.leaseOwner, held.attempts, held.lastError], ['pending', 'owner-b', 2, null]);
      assert.equal(await completeDelivery(db, fresh), true);
      assert.equal(await completeDelivery(db, fresh), false, 'an ended delivery ends once');
      assert.equal((await row(id)).status, 'delivered');
      assert.equal(await redeliver(db, id), 'requeued');
      assert.equal(await redeliver(db, id), 'pending');
    });

    test('operators count deliveries by status (the palai_outbox_deliveries gauge) and purge old delivered ones', async () => {
      const counts = await countDeliveries(db);
      assert.ok(counts.pending > 0 && counts.delivered > 0 && counts.dead > 0);
      const metrics = new Metrics(db);
      const text = await metrics.registry.getSingleMetricAsString('palai_outbox_deliveries');
      for (const [status, count] of Object.entries(counts)) assert.match(text, new RegExp(`palai_outbox_deliveries\\{status="${status}"\\} ${count}\\b`));
      assert.equal(await purgeDelivered(db, 3600), 0, 'nothing is an hour old');
      await db.query("UPDATE outbox_deliveries SET delivered_at = now() - interval '2 hours' WHERE status = 'delivered'");
      assert.equal(await purgeDelivered(db, 3600), counts.delivered);
      assert.deepEqual(await countDeliveries(db), { ...counts, delivered: 0 });
    });

    if (kind === 'postgres') {
      test('palai outbox list and redeliver show and requeue deliveries', async () => {
        const env = userEnv({ PALAI_DATABASE_URL: database.url! });
        const consumer = consumerName('cli');
        const id = await enqueue(consumer);
        const [claim] = await claimDeliveries(db, { owner: 'cli-test', consumers: [consumer], limit: 1, leaseSeconds: 30 });
        await killDelivery(db, claim, 'endpoint gone');

        const listed = await runPalai(['outbox', 'list', '--status', 'dead', '--consumer', consumer, '--json'], env, 60_000);
        assert.equal(listed.code, 0, listed.stderr);
        const rows = JSON.parse(listed.stdout) as Array<{ id: string; status: string; lastError: string; attempts: number }>;
        assert.deepEqual(
          rows.map((r) => [r.id, r.status, r.lastError, r.attempts]),
          [[id, 'dead', 'endpoint gone', 1]],
        );
        const table = await runPalai(['outbox', 'list', '--project', 'outbox', '--consumer', consumer], env, 60_000);
        assert.equal(table.code, 0, table.stderr);
        assert.match(table.stdout, /^ID\s+PROJECT\s+CONSUMER\s+TARGET\s+STATUS\s+ATTEMPTS\s+WHEN\s+LAST_ERROR/);
        assert.match(table.stdout, new RegExp(`${id}\\s.*\\sdead\\s+1\\s.*endpoint gone`));

        const requeued = await runPalai(['outbox', 'redeliver', id], env, 60_000);
        assert.equal(requeued.code, 0, requeued.stderr);
        assert.match(requeued.stdout, /pending again/);
        assert.deepEqual([(await row(id)).status, (await row(id)).attempts], ['pending', 0]);
        const again = await runPalai(['outbox', 'redeliver', id], env, 60_000);
        assert.equal(again.code, 1);
        assert.match(again.stderr, /still pending/);
        const missing = await runPalai(['outbox', 'redeliver', 'dlv_missing'], env, 60_000);
        assert.equal(missing.code, 1);
        assert.match(missing.stderr, /No delivery "dlv_missing"/);
        const badStatus = await runPalai(['outbox', 'list', '--status', 'lost'], env, 60_000);
        assert.notEqual(badStatus.code, 0);
        assert.match(badStatus.stderr, /Unknown delivery status "lost"/);
      });
    }
  });
}

for (const kind of storeKinds) await suite(kind);
