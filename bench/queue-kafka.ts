// Kafka admission: jobs admitted per second by a Palai consumer (each one a
// response committed with its job record before its offset is committed)
// against the raw rate of the same kafkajs client taking the same number of
// records and committing them, doing nothing else, on one local Kafka, as a
// ratio. The hub runs the consumers role only, so no worker competes for the store.
import { startHub } from '../cli/hub.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import type { Db } from '../core/store/db.js';
import { brokerUnavailable, createTopic, kafkaBrokers, kafkaClient } from '../tests/support/brokers.js';
import { onEachStore } from './stores.js';

const JOBS = 500;
const PARTITIONS = 4;

async function fill(brokers: string[], topic: string, body: (i: number) => string): Promise<void> {
  await createTopic(brokers, topic, PARTITIONS);
  const producer = kafkaClient(brokers, 'palai-bench').producer();
  await producer.connect();
  try {
    for (let i = 0; i < JOBS; i += 100) {
      await producer.send({ topic, messages: Array.from({ length: 100 }, (_, j) => ({ key: `k${i + j}`, value: body(i + j) })) });
    }
  } finally {
    await producer.disconnect();
  }
}

/**
 * The client alone: a group member that takes every record and commits after
 * each batch, as the Palai consumer does at most. Timed from the first record,
 * so joining the group is not in it.
 */
async function rawRate(brokers: string[], topic: string): Promise<number> {
  const consumer = kafkaClient(brokers, 'palai-bench').consumer({ groupId: `${topic}-raw`, maxWaitTimeInMs: 500 });
  let started = 0;
  let taken = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          partitionsConsumedConcurrently: PARTITIONS,
          eachBatch: async ({ batch, commitOffsetsIfNecessary }) => {
            started ||= performance.now();
            taken += batch.messages.length;
            const next = (BigInt(batch.lastOffset()) + 1n).toString();
            await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition: batch.partition, offset: next }] }] });
            if (taken >= JOBS) resolve();
          },
        })
        .catch(reject);
    });
    return JOBS / ((performance.now() - started) / 1000);
  } finally {
    await consumer.disconnect();
  }
}

async function palaiRate(db: Db, brokers: string[], topic: string, label: string): Promise<number> {
  const config = {
    ...loadConfig(process.env),
    logLevel: 'silent',
    egressAllowHosts: ['127.0.0.1'],
    secretKey: 'bench-queue-secret-key-0123456789',
    queueMaxBacklog: 0,
  };
  const hub = await startHub({ config, db, role: 'consumers', logger: createLogger('silent') });
  try {
    const project = await createProject(db, `bench-kafka-${label}`);
    await hub.api.agents.create(project.id, { name: 'bench', model: { provider: 'fake', script: [{ text: 'ok' }] } });
    await hub.surfaces.slices.queue.queues.create(project.id, {
      name: 'bench',
      kind: 'kafka',
      agent: 'bench',
      max_in_flight: PARTITIONS,
      paused: false,
      kafka: { brokers, topic, group_id: `${topic}-palai`, max_attempts: 5, ssl: false },
      dead_letter: { topic: `${topic}-dead` },
    });
    // Timed from the first admission, so joining the group is not in it.
    let started = 0;
    let first = 0;
    for (let admitted = 0; admitted < JOBS; admitted = await hub.api.responses.count(project.id, {})) {
      if (admitted > 0 && !started) [started, first] = [performance.now(), admitted];
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return (JOBS - first) / ((performance.now() - started) / 1000);
  } finally {
    await hub.close();
  }
}

export async function benchQueueKafka(): Promise<void> {
  const reason = await brokerUnavailable('kafka').catch((error: Error) => error.message);
  if (reason) {
    console.log(`\n## Kafka admission: skipped (${reason})`);
    return;
  }
  const brokers = (await kafkaBrokers())!;
  let run = 0;
  await onEachStore(async (store, db) => {
    run++;
    const raw = `bench-raw-${process.pid}-${run}`;
    const jobs = `bench-jobs-${process.pid}-${run}`;
    await fill(brokers, raw, (i) => JSON.stringify({ input: `job ${i}` }));
    await fill(brokers, jobs, (i) => JSON.stringify({ input: `job ${i}`, idempotency_key: `bench-${run}-${i}` }));
    const rawPerSecond = await rawRate(brokers, raw);
    const palaiPerSecond = await palaiRate(db, brokers, jobs, String(run));
    console.log(`\n## Kafka admission (${store}, ${JOBS} jobs on ${PARTITIONS} partitions, Kafka on 127.0.0.1)`);
    console.log(`raw consume+commit      ${rawPerSecond.toFixed(0)} msg/s`);
    console.log(`Palai admitted          ${palaiPerSecond.toFixed(0)} jobs/s`);
    console.log(`ratio (Palai / raw)     ${(palaiPerSecond / rawPerSecond).toFixed(2)}`);
  });
}

if (process.argv[1]?.endsWith('queue-kafka.ts')) await benchQueueKafka();
