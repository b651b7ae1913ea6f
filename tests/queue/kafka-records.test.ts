// What becomes of one Kafka record before its offset may be committed, with the
// kernel and the producer stood in for: Palai's own outage retries the same
// record and passes nothing on; any other failure sends it to the retry topic
// with its attempts counted, and to the dead-letter topic after max_attempts;
// a retried record keeps the identity of the record it came from.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KafkaMessage, Message, Producer } from 'kafkajs';
import type { QueueSurfaceApi } from '../../core/surfaces/queue/queue-api.js';
import { atBoundaryError } from '../../core/api/boundary.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { createLogger } from '../../core/logger.js';
import type { AdmissionOutcome, QueueMessage } from '../../core/surfaces/queue/queue-port.js';
import type { KafkaConsumerConfig } from '../../adapters/queue/kafka/client.js';
import { takeRecord, type RecordContext } from '../../adapters/queue/kafka/record-admission.js';

const config = {
  id: 'qc_test',
  projectId: 'proj_test',
  name: 'jobs',
  kind: 'kafka',
  kafka: { brokers: ['127.0.0.1:9'], topic: 'jobs', group_id: 'g', max_attempts: 3 },
  sasl: null,
  agent: 'a',
  reply: null,
  deadLetter: { topic: 'jobs-dead' },
  maxInFlight: 4,
  updatedAt: new Date(0),
} as unknown as KafkaConsumerConfig;

interface Sent {
  topic: string;
  message: Message;
}

/** A context whose kernel answers with `answers` in turn (an Error is thrown) and whose producer records what it sends. */
function harness(answers: Array<AdmissionOutcome | Error>, stopping = new AbortController().signal) {
  const admitted: QueueMessage[] = [];
  const sent: Sent[] = [];
  const counted: string[] = [];
  const producer = {
    send: async ({ topic, messages }: { topic: string; messages: Message[] }) => void sent.push({ topic, message: messages[0] }),
  } as unknown as Producer;
  const context: RecordContext = {
    api: {
      queues: {
        admit: async (_c: unknown, message: QueueMessage) => {
          admitted.push(message);
          const answer = answers.shift() ?? { kind: 'duplicate', responseId: 'resp_1' };
          if (answer instanceof Error) throw answer;
          return answer;
        },
      },
    } as unknown as QueueSurfaceApi,
    config,
    logger: createLogger('silent'),
    metrics: { count: (outcome: string) => void counted.push(outcome) } as unknown as RecordContext['metrics'],
    producer: async () => producer,
    stopping,
    heartbeat: async () => undefined,
    noteAdmitted: () => undefined,
  };
  return { context, admitted, sent, counted };
}

const record = (value: string | null, headers: Record<string, string> = {}, offset = '7'): KafkaMessage =>
  ({
    key: Buffer.from('k'),
    value: value === null ? null : Buffer.from(value),
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Buffer.from(v)])),
    offset,
    timestamp: '0',
    attributes: 0,
    size: 0,
  }) as unknown as KafkaMessage;
const here = { topic: 'jobs', partition: 2, offset: '7' };
const text = (message: Message, name: string) => message.headers?.[name]?.toString();

describe('a Kafka record before its commit', () => {
  test("Palai's own outage: the same record is tried again until it goes through; nothing is passed on", async () => {
    const { context, admitted, sent, counted } = harness([
      new PalaiError('store-unavailable'),
      atBoundaryError(new Error('Connection terminated unexpectedly')) as Error,
      { kind: 'admitted', responseId: 'resp_1' },
    ]);
    assert.equal(await takeRecord(context, here, record('{"input":"hi"}')), 'done');
    assert.deepEqual(
      admitted.map((m) => m.messageId),
      ['jobs/2/7', 'jobs/2/7', 'jobs/2/7'],
    );
    assert.deepEqual(sent, []);
    assert.deepEqual(counted, ['received', 'admitted']);
  });

  test('a stop during an outage leaves the record uncommitted, to come again', async () => {
    const stop = new AbortController();
    const { context, sent } = harness([new PalaiError('store-busy'), new PalaiError('store-busy')], stop.signal);
    const outcome = takeRecord(context, here, record('{"input":"hi"}'));
    setTimeout(() => stop.abort(), 50);
    assert.equal(await outcome, 'later');
    assert.deepEqual(sent, []);
  });

  test('another failure goes to the retry topic with its attempt counted, the reason and its origin', async () => {
    const { context, sent, counted } = harness([new Error('the agent spec could not be read')]);
    assert.equal(await takeRecord(context, here, record('{"input":"hi"}', { 'trace-id': 't' })), 'done');
    assert.equal(sent.length, 1);
    const [{ topic, message }] = sent;
    assert.equal(topic, 'jobs', 'the retry topic defaults to the source topic');
    assert.deepEqual(
      ['palai-attempts', 'palai-source-topic', 'palai-source-partition', 'palai-source-offset', 'trace-id'].map((h) => text(message, h)),
      ['1', 'jobs', '2', '7', 't'],
    );
    assert.match(text(message, 'palai-error-reason') ?? '', /could not be read/);
    assert.equal(message.key?.toString(), 'k');
    assert.deepEqual(counted, ['received', 'failed']);
  });

  test('a retried record keeps its first identity, and is dead-lettered once max_attempts is reached', async () => {
    const { context, admitted, sent, counted } = harness([new Error('still broken')]);
    const retried = record(
      '{"input":"hi"}',
      { 'palai-attempts': '2', 'palai-source-topic': 'jobs', 'palai-source-partition': '1', 'palai-source-offset': '3' },
      '40',
    );
    assert.equal(await takeRecord(context, { topic: 'jobs', partition: 0, offset: '40' }, retried), 'done');
    assert.equal(admitted[0].messageId, 'jobs/1/3');
    assert.equal(sent[0].topic, 'jobs-dead');
    assert.match(text(sent[0].message, 'palai-error-reason') ?? '', /still broken \(after 3 attempts\)/);
    assert.equal(text(sent[0].message, 'palai-source-offset'), '3');
    assert.deepEqual(counted, ['received', 'failed', 'dead_lettered']);
  });

  test('a record the kernel refuses as it is (a raw U+0000 in its value) is dead-lettered at once with the reason, never retried', async () => {
    const refusal = new PalaiError('validation-failed', 'Text in the request contains U+0000 (NUL), which cannot be stored.');
    const { context, sent, counted } = harness([refusal]);
    assert.equal(await takeRecord(context, here, record('{"input":"a\u0000b"}')), 'done');
    assert.deepEqual(
      sent.map((s) => [s.topic, text(s.message, 'palai-error-reason')]),
      [['jobs-dead', 'Text in the request contains U+0000 (NUL), which cannot be stored.']],
    );
    assert.deepEqual(counted, ['received', 'failed', 'dead_lettered']);
  });

  test('an invalid job and a tombstone are dead-lettered with the reason, never retried', async () => {
    const { context, sent, counted } = harness([{ kind: 'invalid', reason: 'the message body is not JSON' }]);
    assert.equal(await takeRecord(context, here, record('nope')), 'done');
    assert.equal(await takeRecord(context, here, record(null)), 'done');
    assert.deepEqual(
      sent.map((s) => [s.topic, text(s.message, 'palai-error-reason')?.slice(0, 28)]),
      [
        ['jobs-dead', 'the message body is not JSON'],
        ['jobs-dead', 'the record has no value (a t'],
      ],
    );
    assert.equal(sent[1].message.value, null);
    assert.deepEqual(counted, ['received', 'dead_lettered', 'received', 'dead_lettered']);
  });
});
