// Kafka consumers when things go wrong, against a real Kafka 4.x of this
// file's own (one it may restart): a deep backlog pauses the topic until it
// drains; a broker restarted mid-run is taken up again without help; a second
// Palai joining the group and leaving it again splits the partitions between
// them, losing no job and running none twice (jobs without idempotency keys,
// deduped by their records' identity).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHub } from '../../cli/hub.js';
import { createLogger } from '../../core/logger.js';
import { startDedicatedKafka, type DedicatedKafka } from '../support/brokers.js';
import { describeEachStore, testConfig } from '../support/hub.js';
import { consumerMetric, createAgent, createConsumer, eventually, freshProject, KafkaSide, SETTINGS, uniqueName } from './kafka-harness.js';

/** This file restarts its broker, so every test here runs on a Kafka of its own (started once). */
async function ownKafka(): Promise<DedicatedKafka | string> {
  const required = process.env.PALAI_REQUIRE_SERVICES === '1';
  if (process.env.PALAI_TEST_START_BROKERS === '0') {
    if (required) throw new Error('PALAI_TEST_START_BROKERS=0, but these tests restart a Kafka of their own (PALAI_REQUIRE_SERVICES=1)');
    return 'PALAI_TEST_START_BROKERS=0, and these tests restart a Kafka of their own';
  }
  try {
    return await startDedicatedKafka();
  } catch (error) {
    if (required) throw error;
    return `starting a Kafka of its own failed: ${(error as Error).message}`;
  }
}

const started = await ownKafka();
const unavailable = typeof started === 'string' ? started : null;
const broker = typeof started === 'string' ? null : started;
const side = broker && new KafkaSide(broker.brokers);
after(async () => {
  await side?.close();
  await broker?.close();
});

const job = (body: Record<string, unknown>, key: string) => ({ key, value: JSON.stringify(body) });

describeEachStore(
  'Kafka consumers under backpressure',
  (ctx) => {
    test('while the backlog is deeper than allowed the topic is paused; once it drains every job is admitted', { skip: unavailable ?? false }, async () => {
      const p = await freshProject(ctx);
      const api = ctx().hub.api;
      await createAgent(ctx, p, 'blocker', [{ text: 'one two', delay_ms: 60_000 }]);
      await createAgent(ctx, p, 'filler');
      await createAgent(ctx, p, 'paced');
      // The only worker slot is taken, so two more responses stay queued: a backlog of 2 against a bound of 1.
      const blocker = await api.responses.admit(p.projectId, { agent: 'blocker', input: [{ role: 'user', content: 'hold on' }], background: true });
      await eventually('the blocker runs', async () => (await api.responses.get(p.projectId, blocker.id)).status === 'in_progress');
      for (const input of ['first', 'second'])
        await api.responses.admit(p.projectId, { agent: 'filler', input: [{ role: 'user', content: input }], background: true });
      // This process watches the backlog while it runs a consumer: the consumer joins its group first.
      const [topic, dead] = await side!.topics(2, 'paced', 'dead');
      const groupId = uniqueName('group');
      const consumer = await createConsumer(ctx, p, {
        name: 'paced',
        kind: 'kafka',
        agent: 'paced',
        kafka: { brokers: side!.brokers, topic, group_id: groupId },
        dead_letter: { topic: dead },
      });
      await eventually('the consumer has joined its group', async () => (await side!.members(groupId)) === 1);
      await eventually('backpressure engages', async () => ctx().hub.queues!.backpressureEngaged);

      await side!.produce(
        topic,
        Array.from({ length: 6 }, (_, i) => job({ input: `paced ${i}` }, `k${i}`)),
      );
      // Time for a fetch or two: a consumer that ignored backpressure would take the records now.
      await sleep(1500);
      assert.equal(await api.responses.count(p.projectId, { agent: 'paced' }), 0);
      assert.equal(await consumerMetric(ctx().hub, consumer.id, 'received'), 0);

      await api.responses.cancel(p.projectId, blocker.id);
      await eventually('every job is admitted once the backlog drains', async () => (await api.responses.count(p.projectId, { agent: 'paced' })) === 6);
      await side!.waitCaughtUp(groupId, topic);
      assert.equal(await consumerMetric(ctx().hub, consumer.id, 'admitted'), 6);
    });
  },
  { ...SETTINGS, queueMaxBacklog: 1, workerConcurrency: 1 },
);

describeEachStore(
  'Kafka consumers and their brokers',
  (ctx) => {
    test('a broker restarted mid-run is taken up again without help', { skip: unavailable ?? false }, async () => {
      const own = new KafkaSide(broker!.brokers);
      const p = await freshProject(ctx);
      await createAgent(ctx, p, 'steady');
      const [topic, dead] = await own.topics(2, 'steady', 'dead');
      const groupId = uniqueName('group');
      await createConsumer(ctx, p, {
        name: 'steady',
        kind: 'kafka',
        agent: 'steady',
        kafka: { brokers: broker!.brokers, topic, group_id: groupId },
        dead_letter: { topic: dead },
      });
      await own.produce(
        topic,
        Array.from({ length: 5 }, (_, i) => job({ input: `before ${i}`, idempotency_key: `before-${i}` }, `k${i}`)),
      );
      await eventually('the jobs before the restart are admitted', async () => (await ctx().hub.api.responses.count(p.projectId, {})) === 5);
      await own.close();

      await broker!.restart();
      const again = new KafkaSide(broker!.brokers);
      try {
        await again.produce(
          topic,
          Array.from({ length: 5 }, (_, i) => job({ input: `after ${i}`, idempotency_key: `after-${i}` }, `k${i}`)),
        );
        await eventually('the jobs after the restart are admitted', async () => (await ctx().hub.api.responses.count(p.projectId, {})) === 10, 90_000);
        await again.waitCaughtUp(groupId, topic);
      } finally {
        await again.close();
      }
    });

    test(
      'a second Palai joining the group and leaving it again: the partitions are shared, no job is lost or run twice',
      { skip: unavailable ?? false },
      async () => {
        const p = await freshProject(ctx);
        await createAgent(ctx, p, 'shared');
        const [topic, dead] = await side!.topics(4, 'shared', 'dead');
        const groupId = uniqueName('group');
        const consumer = await createConsumer(ctx, p, {
          name: 'shared',
          kind: 'kafka',
          agent: 'shared',
          kafka: { brokers: side!.brokers, topic, group_id: groupId },
          dead_letter: { topic: dead },
        });
        // No idempotency keys: only the records' own identity keeps a redelivered job from running twice.
        const wave = (label: string, n: number) => Array.from({ length: n }, (_, i) => job({ input: `${label} ${i}` }, `${label}-${i}`));
        const responses = () => ctx().hub.api.responses.count(p.projectId, {});

        await side!.produce(topic, wave('first', 40));
        await eventually('the first wave is admitted', async () => (await responses()) === 40);
        const second = await startHub({ config: testConfig(SETTINGS), db: ctx().hub.kernel.db, logger: createLogger('silent') });
        let secondAdmitted = 0;
        try {
          await eventually('the second Palai holds partitions of the group', async () => (await side!.assignedMembers(groupId)) === 2);
          await side!.produce(topic, wave('second', 60));
          await eventually('the second wave is admitted', async () => (await responses()) === 100);
          await side!.waitCaughtUp(groupId, topic);
          secondAdmitted = await consumerMetric(second, consumer.id, 'admitted');
        } finally {
          await second.close();
        }
        await side!.produce(topic, wave('third', 40));
        await eventually('the third wave is admitted', async () => (await responses()) === 140);
        await side!.waitCaughtUp(groupId, topic);
        assert.equal(await responses(), 140);
        const firstAdmitted = await consumerMetric(ctx().hub, consumer.id, 'admitted');
        assert.ok(secondAdmitted > 0 && firstAdmitted > 0, `both took jobs: ${firstAdmitted} and ${secondAdmitted}`);
        assert.equal(firstAdmitted + secondAdmitted, 140);
      },
    );
  },
  SETTINGS,
);
