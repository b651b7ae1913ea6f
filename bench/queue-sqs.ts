// SQS admission: jobs admitted per second by a Palai consumer (each one a
// response committed with its job record before the message is deleted)
// against the raw rate of the same AWS SDK client receiving and deleting the
// same number of messages and doing nothing else, on one local ElasticMQ, as a
// ratio. The hub runs the consumers role only, so no worker competes for the store.
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { startHub } from '../cli/hub.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import type { Db } from '../core/store/db.js';
import { brokerUnavailable, createSqsQueue, sqsClient, sqsEndpoint } from '../tests/support/brokers.js';
import { onEachStore } from './stores.js';

const JOBS = 500;

async function fill(client: SQSClient, url: string, body: (i: number) => string): Promise<void> {
  for (let i = 0; i < JOBS; i += 10) {
    await client.send(
      new SendMessageBatchCommand({ QueueUrl: url, Entries: Array.from({ length: 10 }, (_, j) => ({ Id: String(j), MessageBody: body(i + j) })) }),
    );
  }
}

/** The client alone: receive ten at a time and delete them, until the queue is empty. */
async function rawRate(client: SQSClient, url: string): Promise<number> {
  const started = performance.now();
  for (let taken = 0; taken < JOBS;) {
    const out = await client.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) continue;
    await client.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) }));
    taken += messages.length;
  }
  return JOBS / ((performance.now() - started) / 1000);
}

async function palaiRate(db: Db, endpoint: string, url: string, label: string): Promise<number> {
  const config = {
    ...loadConfig(process.env),
    logLevel: 'silent',
    egressAllowHosts: ['127.0.0.1'],
    secretKey: 'bench-queue-secret-key-0123456789',
    queueMaxBacklog: 0,
  };
  const hub = await startHub({ config, db, role: 'consumers', logger: createLogger('silent') });
  try {
    const project = await createProject(db, `bench-queue-${label}`);
    await hub.api.agents.create(project.id, { name: 'bench', model: { provider: 'fake', script: [{ text: 'ok' }] } });
    const started = performance.now();
    await hub.surfaces.slices.queue.queues.create(project.id, {
      name: 'bench',
      kind: 'sqs',
      agent: 'bench',
      max_in_flight: 50,
      paused: false,
      sqs: { queue_url: url, endpoint, region: 'elasticmq', wait_seconds: 1, visibility_seconds: 30 },
      credentials: { access_key_id: 'bench', secret_access_key: 'bench-secret' },
    });
    while ((await hub.api.responses.count(project.id, {})) < JOBS) await new Promise((resolve) => setTimeout(resolve, 20));
    return JOBS / ((performance.now() - started) / 1000);
  } finally {
    await hub.close();
  }
}

export async function benchQueueSqs(): Promise<void> {
  const reason = await brokerUnavailable('sqs').catch((error: Error) => error.message);
  if (reason) {
    console.log(`\n## SQS admission: skipped (${reason})`);
    return;
  }
  const endpoint = (await sqsEndpoint())!;
  const client = sqsClient(endpoint);
  try {
    let run = 0;
    await onEachStore(async (store, db) => {
      run++;
      const raw = await createSqsQueue(endpoint, `bench-raw-${process.pid}-${run}`);
      const jobs = await createSqsQueue(endpoint, `bench-jobs-${process.pid}-${run}`);
      await fill(client, raw.url, (i) => JSON.stringify({ input: `job ${i}` }));
      await fill(client, jobs.url, (i) => JSON.stringify({ input: `job ${i}`, idempotency_key: `bench-${run}-${i}` }));
      const rawPerSecond = await rawRate(client, raw.url);
      const palaiPerSecond = await palaiRate(db, endpoint, jobs.url, String(run));
      console.log(`\n## SQS admission (${store}, ${JOBS} jobs, ElasticMQ on 127.0.0.1)`);
      console.log(`raw receive+delete      ${rawPerSecond.toFixed(0)} msg/s`);
      console.log(`Palai admitted          ${palaiPerSecond.toFixed(0)} jobs/s`);
      console.log(`ratio (Palai / raw)     ${(palaiPerSecond / rawPerSecond).toFixed(2)}`);
    });
  } finally {
    client.destroy();
  }
}
