// The broker harness works with the official clients: kafkajs against a real
// Kafka 4.x (KRaft) and the AWS SDK against ElasticMQ. Dedicated brokers that
// restart with their data kept are exercised by the consumers' own fault tests
// (tests/queue/sqs.test.ts, tests/queue/kafka-faults.test.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import { brokerUnavailable, createSqsQueue, createTopic, kafkaBrokers, kafkaClient, sqsClient, sqsEndpoint } from '../support/brokers.js';

const unique = () => randomBytes(4).toString('hex');
const [kafkaReason, sqsReason] = await Promise.all([brokerUnavailable('kafka'), brokerUnavailable('sqs')]);

interface Seen {
  partition: number;
  message: KafkaMessage;
}

/**
 * Runs a consumer of `groupId` from the committed offset (or the beginning)
 * until it has seen `count` messages, committing each one's next offset by
 * hand while `commit` allows; resolves with what it saw, disconnected.
 */
async function consume(kafka: Kafka, groupId: string, topic: string, count: number, commit = (_seen: number) => true): Promise<Seen[]> {
  const consumer: Consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  const seen: Seen[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ partition, message }) => {
            seen.push({ partition, message });
            if (commit(seen.length)) {
              await consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
            }
            if (seen.length === count) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

async function committedOffsets(kafka: Kafka, groupId: string, topic: string): Promise<Map<number, string>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return new Map(entry.partitions.map((p) => [p.partition, p.offset]));
  } finally {
    await admin.disconnect();
  }
}

describe('Kafka through kafkajs', { skip: kafkaReason ?? false, timeout: 180_000 }, () => {
  let brokers: string[];
  before(async () => {
    brokers = (await kafkaBrokers())!;
  });

  test('keyed messages with headers reach a consumer group in order per key, and its manual commits are the next offsets', async () => {
    const kafka = kafkaClient(brokers);
    const topic = `brokers-${unique()}`;
    await createTopic(brokers, topic, 3);
    const producer = kafka.producer();
    await producer.connect();
    const sent = Array.from({ length: 9 }, (_, i) => ({ key: `key-${i % 3}`, value: `value-${i}`, headers: { 'palai-seq': String(i) } }));
    await producer.send({ topic, messages: sent });
    await producer.disconnect();

    const groupId = `group-${unique()}`;
    const seen = await consume(kafka, groupId, topic, sent.length);

    const byKey = new Map<string, Seen[]>();
    for (const entry of seen) {
      const key = entry.message.key!.toString();
      byKey.set(key, [...(byKey.get(key) ?? []), entry]);
      assert.equal(entry.message.headers!['palai-seq']!.toString(), entry.message.value!.toString().replace('value-', ''));
    }
    assert.equal(byKey.size, 3);
    for (const [key, entries] of byKey) {
      assert.equal(new Set(entries.map((e) => e.partition)).size, 1, `${key} stays on one partition`);
      const expected = sent.filter((m) => m.key === key).map((m) => m.value);
      assert.deepEqual(
        entries.map((e) => e.message.value!.toString()),
        expected,
        `${key} arrives in order`,
      );
    }

    const last = new Map<number, number>();
    for (const { partition, message } of seen) last.set(partition, Math.max(last.get(partition) ?? -1, Number(message.offset)));
    const committed = await committedOffsets(kafka, groupId, topic);
    for (const [partition, offset] of last) assert.equal(committed.get(partition), String(offset + 1));
  });
});

async function receive(client: SQSClient, url: string, options: { wait?: number; max?: number } = {}): Promise<Message[]> {
  const { Messages } = await client.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      WaitTimeSeconds: options.wait ?? 0,
      MaxNumberOfMessages: options.max ?? 10,
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      MessageAttributeNames: ['All'],
    }),
  );
  return Messages ?? [];
}

async function queueDepth(client: SQSClient, url: string): Promise<{ visible: number; inFlight: number }> {
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
  );
  return { visible: Number(Attributes!.ApproximateNumberOfMessages), inFlight: Number(Attributes!.ApproximateNumberOfMessagesNotVisible) };
}

describe('ElasticMQ through the AWS SDK', { skip: sqsReason ?? false, timeout: 120_000 }, () => {
  let endpoint: string;
  let client: SQSClient;
  before(async () => {
    endpoint = (await sqsEndpoint())!;
    client = sqsClient(endpoint);
  });
  after(() => client?.destroy());

  test('a standard queue: a long poll wakes on a send; visibility changes redeliver; a batch delete empties it', async () => {
    const queue = await createSqsQueue(endpoint, `standard-${unique()}`, { VisibilityTimeout: '30' });
    const polling = receive(client, queue.url, { wait: 10 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await client.send(
      new SendMessageCommand({
        QueueUrl: queue.url,
        MessageBody: 'first',
        MessageAttributes: { kind: { DataType: 'String', StringValue: 'test' } },
      }),
    );
    const [first] = await polling;
    assert.equal(first.Body, 'first');
    assert.equal(first.MessageAttributes?.kind?.StringValue, 'test');

    await client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'second' }));
    const [second] = await receive(client, queue.url, { wait: 5 });
    assert.equal(second.Body, 'second');
    assert.deepEqual(await queueDepth(client, queue.url), { visible: 0, inFlight: 2 });

    // Visible again at once: the next receive gets it a second time.
    await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: queue.url, ReceiptHandle: first.ReceiptHandle!, VisibilityTimeout: 0 }));
    const [again] = await receive(client, queue.url, { wait: 5 });
    assert.equal(again.Body, 'first');
    assert.equal(again.Attributes?.ApproximateReceiveCount, '2');

    const deleted = await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: [
          { Id: 'a', ReceiptHandle: again.ReceiptHandle! },
          { Id: 'b', ReceiptHandle: second.ReceiptHandle! },
        ],
      }),
    );
    assert.deepEqual(deleted.Successful?.map((e) => e.Id).sort(), ['a', 'b']);
    assert.equal(deleted.Failed?.length ?? 0, 0);
    assert.deepEqual(await queueDepth(client, queue.url), { visible: 0, inFlight: 0 });
  });

  test('a FIFO queue keeps each group in order and drops a duplicate deduplication id', async () => {
    const queue = await createSqsQueue(endpoint, `ordered-${unique()}.fifo`);
    const sends: [group: string, body: string, dedup: string][] = [
      ['g1', 'g1-a', '1'],
      ['g2', 'g2-a', '2'],
      ['g1', 'g1-b', '3'],
      ['g1', 'g1-b duplicate', '3'],
      ['g2', 'g2-b', '4'],
    ];
    for (const [group, body, dedup] of sends) {
      await client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body, MessageGroupId: group, MessageDeduplicationId: dedup }));
    }
    const bodies: string[] = [];
    for (let round = 0; round < 10 && bodies.length < 4; round++) {
      const messages = await receive(client, queue.url, { wait: 1 });
      bodies.push(...messages.map((m) => m.Body!));
      if (messages.length > 0) {
        await client.send(
          new DeleteMessageBatchCommand({ QueueUrl: queue.url, Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }),
        );
      }
    }
    assert.deepEqual(
      bodies.filter((b) => b.startsWith('g1')),
      ['g1-a', 'g1-b'],
    );
    assert.deepEqual(
      bodies.filter((b) => b.startsWith('g2')),
      ['g2-a', 'g2-b'],
    );
  });

  test('a redrive policy moves a message to its dead-letter queue after maxReceiveCount receives', async () => {
    const deadLetters = await createSqsQueue(endpoint, `dlq-${unique()}`);
    const queue = await createSqsQueue(endpoint, `redriven-${unique()}`, {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetters.arn, maxReceiveCount: 2 }),
    });
    await client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'poison' }));
    for (let receiveCount = 1; receiveCount <= 2; receiveCount++) {
      const [message] = await receive(client, queue.url, { wait: 5 });
      assert.equal(message.Body, 'poison');
      assert.equal(message.Attributes?.ApproximateReceiveCount, String(receiveCount));
      // A failed handler: give the message back at once.
      await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle!, VisibilityTimeout: 0 }));
    }
    assert.deepEqual(await receive(client, queue.url, { wait: 1 }), []);
    const [dead] = await receive(client, deadLetters.url, { wait: 5 });
    assert.equal(dead.Body, 'poison');
  });
});
