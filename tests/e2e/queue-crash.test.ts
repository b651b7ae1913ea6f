// SQS jobs survive a SIGKILL: `palai serve` takes jobs from a real ElasticMQ
// queue (every fifth one sent twice) and is killed mid-batch, with messages
// received and not yet deleted; the messages come back after their visibility
// timeout and a new process on the same database takes them. Every job ends
// with exactly one response: nothing lost, nothing run twice, and every result
// reaches the reply queue.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { cleanUpProcesses } from '../support/cli.js';
import { brokerUnavailable, createSqsQueue, elasticmqSource, sqsClient, sqsEndpoint } from '../support/brokers.js';
import { postgresUnavailable } from '../support/stores.js';
import { api, baseOf, createAgent, kill9, logsOf, useCluster, waitUntil } from './cluster.js';

const JOBS = 500;
const skip = (await postgresUnavailable()) ?? (await brokerUnavailable('sqs'));
const endpoint = skip ? '' : (await sqsEndpoint())!;
let client: SQSClient | null = null;

after(() => {
  client?.destroy();
  cleanUpProcesses();
});

async function visible(url: string): Promise<{ visible: number; hidden: number }> {
  const { Attributes } = await client!.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
  );
  return { visible: Number(Attributes?.ApproximateNumberOfMessages), hidden: Number(Attributes?.ApproximateNumberOfMessagesNotVisible) };
}

describe('SQS jobs across a SIGKILL', { skip: skip ?? false }, () => {
  const cluster = useCluster({ PALAI_SECRET_KEY: 'e2e-queue-secret-key-0123456789', PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1' });

  test(`${JOBS} jobs, a kill mid-batch, a restart: one response per job and every result sent`, { timeout: 240_000 }, async () => {
    client = sqsClient(endpoint);
    const source = await createSqsQueue(endpoint, `crash-jobs-${process.pid}`);
    const reply = await createSqsQueue(endpoint, `crash-results-${process.pid}`);
    const first = await cluster.start('first', 'all');
    await createAgent(baseOf(first), { name: 'cruncher', model: { provider: 'fake', script: [{ text: 'crunched', delay_ms: 20 }] } });
    const created = await api(baseOf(first), 'POST', '/v1/queue_consumers', {
      name: 'crunch',
      kind: 'sqs',
      agent: 'cruncher',
      max_in_flight: 30,
      ...elasticmqSource(source.url, endpoint, { visibility_seconds: 5 }),
      reply: { queue_url: reply.url },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // Each job once, and every fifth one again later: 600 messages, 500 jobs.
    const sends = [...Array.from({ length: JOBS }, (_, i) => i), ...Array.from({ length: JOBS / 5 }, (_, i) => i * 5)];
    for (let i = 0; i < sends.length; i += 10) {
      await client.send(
        new SendMessageBatchCommand({
          QueueUrl: source.url,
          Entries: sends.slice(i, i + 10).map((n, j) => ({ Id: String(j), MessageBody: JSON.stringify({ input: `job ${n}`, idempotency_key: `crash-${n}` }) })),
        }),
      );
    }
    // Killed while it holds messages: some taken, most still waiting.
    await waitUntil('the first process is mid-batch', 60_000, async () => {
      const q = await visible(source.url);
      return q.hidden > 0 && q.visible < sends.length - 30 && q.visible > 30;
    });
    await kill9(first);

    const second = await cluster.start('second', 'all');
    const results = new Map<string, Set<string>>();
    await waitUntil('every job has its result', 180_000, async () => {
      const out = await client!.send(
        new ReceiveMessageCommand({ QueueUrl: reply.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: ['All'] }),
      );
      for (const m of out.Messages ?? []) {
        const result = JSON.parse(m.Body!) as { idempotency_key: string; response_id: string; status: string };
        assert.equal(result.status, 'completed');
        results.set(result.idempotency_key, (results.get(result.idempotency_key) ?? new Set()).add(result.response_id));
      }
      return results.size === JOBS;
    }).catch((error) => {
      throw new Error(`${error.message} (${results.size} of ${JOBS})\n${logsOf(first, second).slice(-4000)}`);
    });
    const twice = [...results].filter(([, ids]) => ids.size > 1);
    assert.deepEqual(twice, [], 'no job ran as two responses');
    let responses = 0;
    for (let after = ''; ;) {
      const page = await api(baseOf(second), 'GET', `/v1/responses?limit=100&agent=cruncher${after && `&after=${after}`}`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      responses += page.body.data.length;
      if (!page.body.has_more) break;
      after = page.body.last_id;
    }
    assert.equal(responses, JOBS, 'exactly one response per job');
    await waitUntil('the source queue is empty', 30_000, async () => {
      const q = await visible(source.url);
      return q.visible === 0 && q.hidden === 0;
    });
  });
});
