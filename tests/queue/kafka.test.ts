// Kafka consumers as a specification, against a real Kafka 4.x with kafkajs as
// the producer: a job in, a result out on the reply topic keyed by the job's
// idempotency key; duplicates and redeliveries (a consumer restarted midway, a
// group rewound to the start) run nothing twice; records that can never be
// jobs go to the dead-letter topic with the reason, and the partition goes on;
// jobs of one key are admitted in their order. Each test has its own project,
// topics and group.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { QueueResult } from '../../generated/protocol-schemas.js';
import { QueueResult as validQueueResult } from '../../generated/protocol-validators.js';
import { brokerUnavailable, kafkaBrokers } from '../support/brokers.js';
import { describeEachStore } from '../support/hub.js';
import { consumerMetric, createAgent, createConsumer, eventually, freshProject, header, KafkaSide, SETTINGS, setPaused, uniqueName } from './kafka-harness.js';

const unavailable = await brokerUnavailable('kafka');
let side: KafkaSide;
before(async () => {
  if (!unavailable) side = new KafkaSide((await kafkaBrokers())!);
});
after(() => side?.close());

const job = (body: Record<string, unknown>, key?: string) => ({ key: key ?? null, value: JSON.stringify(body) });

describeEachStore(
  'Kafka consumers',
  (ctx) => {
    const responses = (projectId: string) => ctx().hub.api.responses.count(projectId, {});

    test('a job in, its result out on the reply topic, keyed by the idempotency key', { skip: unavailable ?? false }, async () => {
      const p = await freshProject(ctx);
      await createAgent(ctx, p, 'summarizer', [{ text: 'the summary' }]);
      const [topic, replies, dead] = await side.topics(1, 'jobs', 'results', 'dead');
      await createConsumer(ctx, p, {
        name: 'jobs',
        kind: 'kafka',
        kafka: { brokers: side.brokers, topic, group_id: uniqueName('group') },
        reply: { topic: replies },
        dead_letter: { topic: dead },
      });
      await side.produce(topic, [job({ agent: 'summarizer', input: 'summarize this', idempotency_key: 'job-1', metadata: { order: '42' } })]);

      const [record] = await side.read(replies, 1);
      const result: QueueResult = JSON.parse(record.value!.toString());
      assert.ok(validQueueResult(result), JSON.stringify(validQueueResult.errors));
      assert.deepEqual([result.idempotency_key, result.status, result.output_text, result.metadata], ['job-1', 'completed', 'the summary', { order: '42' }]);
      assert.equal(record.key?.toString(), 'job-1');
      assert.equal(header(record, 'palai-response-id'), result.response_id);
      assert.equal(header(record, 'palai-status'), 'completed');
      assert.match(header(record, 'palai-delivery-id') ?? '', /^dlv_/);
      assert.equal((await ctx().hub.api.responses.get(p.projectId, result.response_id)).agent.name, 'summarizer');
      assert.equal(await responses(p.projectId), 1);
    });

    test(
      '230 records — duplicates, jobs without keys, a consumer restart midway and a group rewound to the start — run exactly 200 responses',
      { skip: unavailable ?? false },
      async () => {
        const p = await freshProject(ctx);
        await createAgent(ctx, p, 'bulk');
        const [topic, dead] = await side.topics(4, 'bulk', 'dead');
        const groupId = uniqueName('group');
        const consumer = await createConsumer(ctx, p, {
          name: 'bulk',
          kind: 'kafka',
          agent: 'bulk',
          max_in_flight: 4,
          kafka: { brokers: side.brokers, topic, group_id: groupId },
          dead_letter: { topic: dead },
        });
        const keyed = Array.from({ length: 150 }, (_, i) => job({ input: `job ${i}`, idempotency_key: `bulk-${i}` }, `k${i % 7}`));
        // Without an idempotency key a job is deduped by its record's own identity (topic/partition/offset) alone.
        const unkeyed = Array.from({ length: 50 }, (_, i) => job({ input: `unkeyed ${i}` }, `u${i % 5}`));
        const duplicates = keyed.filter((_, i) => i % 5 === 0);
        const records = [...keyed, ...unkeyed, ...duplicates].sort(() => Math.random() - 0.5);
        await side.produce(topic, records.slice(0, 115));
        // Restarted while it holds records: what it had not committed comes again.
        await setPaused(ctx, p, consumer.id, true);
        await setPaused(ctx, p, consumer.id, false);
        await side.produce(topic, records.slice(115));
        await side.waitCaughtUp(groupId, topic);
        assert.equal(await responses(p.projectId), 200);

        // Every record once more, as after a crash before any commit.
        await setPaused(ctx, p, consumer.id, true);
        await eventually('the paused consumer has left its group', async () => (await side.members(groupId)) === 0);
        await side.rewind(groupId, topic);
        await setPaused(ctx, p, consumer.id, false);
        await side.waitCaughtUp(groupId, topic);
        assert.equal(await responses(p.projectId), 200);
        assert.equal(await consumerMetric(ctx().hub, consumer.id, 'admitted'), 200);
        assert.ok((await consumerMetric(ctx().hub, consumer.id, 'duplicate')) >= duplicates.length + records.length);
        assert.equal(await consumerMetric(ctx().hub, consumer.id, 'dead_lettered'), 0);
      },
    );

    test('records that can never be jobs go to the dead-letter topic with the reason, and the partition goes on', { skip: unavailable ?? false }, async () => {
      const p = await freshProject(ctx);
      await createAgent(ctx, p, 'worker-bee');
      const [topic, dead] = await side.topics(1, 'mixed', 'dead');
      await createConsumer(ctx, p, {
        name: 'mixed',
        kind: 'kafka',
        kafka: { brokers: side.brokers, topic, group_id: uniqueName('group') },
        dead_letter: { topic: dead },
      });
      await side.produce(topic, [
        { key: 'a', value: 'this is not json', headers: { 'trace-id': 't-1' } },
        job({ agent: 'worker-bee' }),
        job({ agent: 'worker-bee', input: 'hi', surprise: true }),
        job({ agent: 'nobody-here', input: 'hi' }),
        job({ input: 'no agent anywhere' }),
        { key: 'gone', value: null },
        // Text no store can hold, once decoded: U+0000 in the input.
        job({ agent: 'worker-bee', input: 'nul \u0000 inside' }),
        job({ agent: 'worker-bee', input: 'a valid one after them all' }),
      ]);
      const deadLettered = await side.read(dead, 7);
      const reasons = deadLettered.map((m) => header(m, 'palai-error-reason') ?? '');
      for (const expected of [
        /not JSON/,
        /input is required/,
        /surprise is not a known field/,
        /nobody-here/,
        /names no agent/,
        /tombstone/,
        /the job's \/input contains U\+0000 \(NUL\)/,
      ]) {
        assert.ok(
          reasons.some((r) => expected.test(r)),
          `${expected} in ${reasons.join(' | ')}`,
        );
      }
      const notJson = deadLettered.find((m) => m.value?.toString() === 'this is not json');
      assert.ok(notJson, 'the original value is kept');
      assert.deepEqual(
        [
          notJson.key?.toString(),
          header(notJson, 'trace-id'),
          header(notJson, 'palai-source-topic'),
          header(notJson, 'palai-source-partition'),
          header(notJson, 'palai-source-offset'),
        ],
        ['a', 't-1', topic, '0', '0'],
      );
      const tombstone = deadLettered.find((m) => m.key?.toString() === 'gone');
      assert.equal(tombstone?.value, null);
      await eventually('the valid job after them is admitted', async () => (await responses(p.projectId)) === 1);
    });

    test('jobs with the same key are admitted in their order, and session_key threads them into one session', { skip: unavailable ?? false }, async () => {
      const p = await freshProject(ctx);
      await createAgent(ctx, p, 'ordered');
      const [topic, dead] = await side.topics(3, 'ordered', 'dead');
      await createConsumer(ctx, p, {
        name: 'ordered',
        kind: 'kafka',
        agent: 'ordered',
        max_in_flight: 3,
        kafka: { brokers: side.brokers, topic, group_id: uniqueName('group') },
        dead_letter: { topic: dead },
      });
      const keys = ['alpha', 'beta', 'gamma'];
      const records = Array.from({ length: 8 }, (_, i) =>
        keys.map((k) => job({ input: `${k} ${i}`, session_key: k, metadata: { key: k, seq: String(i) } }, k)),
      ).flat();
      await side.produce(topic, records);
      await eventually('every job is admitted', async () => (await responses(p.projectId)) === records.length);
      // Response ids sort by creation, so ascending order is admission order.
      const page = await ctx().hub.api.responses.list(p.projectId, {}, { limit: 100, order: 'asc' });
      for (const k of keys) {
        const mine = page.data.filter((r) => r.metadata?.key === k);
        assert.deepEqual(
          mine.map((r) => r.metadata?.seq),
          ['0', '1', '2', '3', '4', '5', '6', '7'],
          `key ${k} in order`,
        );
        assert.equal(new Set(mine.map((r) => r.session_id)).size, 1, `key ${k} is one session`);
      }
    });
  },
  SETTINGS,
);
