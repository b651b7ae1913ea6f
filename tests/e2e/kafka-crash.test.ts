// Kafka jobs survive a SIGKILL: `palai serve` takes jobs from a real Kafka
// topic and is killed mid-batch, with records admitted and their offsets not
// yet committed; a new process on the same database joins the group, gets
// those records again, and finds them admitted. Every job ends with exactly one
// response — those with an idempotency key and those deduped by their record's
// identity alike — and every result reaches the reply topic.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Consumer } from 'kafkajs';
import { cleanUpProcesses } from '../support/cli.js';
import { brokerUnavailable, createTopic, kafkaBrokers, kafkaClient } from '../support/brokers.js';
import { postgresUnavailable } from '../support/stores.js';
import { api, baseOf, createAgent, kill9, logsOf, useCluster, waitUntil, type HubProcess } from './cluster.js';

const JOBS = 300;
const skip = (await postgresUnavailable()) ?? (await brokerUnavailable('kafka'));
const brokers = skip ? [] : (await kafkaBrokers())!;
let reader: Consumer | null = null;

after(async () => {
  await reader?.disconnect();
  cleanUpProcesses();
});

async function admitted(node: HubProcess): Promise<number> {
  const text = await (await fetch(`${node.admin ?? baseOf(node)}/metrics`)).text();
  return Number(/palai_queue_messages_total\{consumer="[^"]+",outcome="admitted"\} (\d+)/.exec(text)?.[1] ?? 0);
}

describe('Kafka jobs across a SIGKILL', { skip: skip ?? false }, () => {
  const cluster = useCluster({ PALAI_SECRET_KEY: 'e2e-kafka-secret-key-0123456789', PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1' });

  test(`${JOBS} jobs, a kill mid-batch, a restart: one response per job and every result sent`, { timeout: 240_000 }, async () => {
    const suffix = `${process.pid}-${Date.now()}`;
    const [topic, replies, dead] = [`crash-jobs-${suffix}`, `crash-results-${suffix}`, `crash-dead-${suffix}`];
    await createTopic(brokers, topic, 4);
    await createTopic(brokers, replies, 1);
    await createTopic(brokers, dead, 1);
    const first = await cluster.start('first', 'all');
    await createAgent(baseOf(first), { name: 'cruncher', model: { provider: 'fake', script: [{ text: 'crunched', delay_ms: 20 }] } });
    const created = await api(baseOf(first), 'POST', '/v1/queue_consumers', {
      name: 'crunch',
      kind: 'kafka',
      agent: 'cruncher',
      max_in_flight: 4,
      kafka: { brokers, topic, group_id: `crash-group-${suffix}` },
      reply: { topic: replies },
      dead_letter: { topic: dead },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const producer = kafkaClient(brokers).producer();
    await producer.connect();
    // Half the jobs carry an idempotency key; the others are deduped by their record's topic/partition/offset alone.
    const jobs = Array.from({ length: JOBS }, (_, i) => ({
      input: `job ${i}`,
      metadata: { job: String(i) },
      ...(i % 2 === 0 ? { idempotency_key: `crash-${i}` } : {}),
    }));
    await producer.send({ topic, messages: jobs.map((job, i) => ({ key: `k${i % 16}`, value: JSON.stringify(job) })) });
    await producer.disconnect();

    // Killed while it holds records: some admitted (not all of them committed), most still waiting.
    await waitUntil('the first process is mid-batch', 60_000, async () => (await admitted(first)) >= 40);
    await kill9(first);
    const second = await cluster.start('second', 'all');

    const results = new Map<string, Set<string>>();
    const statuses = new Set<string>();
    reader = kafkaClient(brokers).consumer({ groupId: `crash-reader-${suffix}`, maxWaitTimeInMs: 200 });
    await reader.connect();
    await reader.subscribe({ topic: replies, fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        const result = JSON.parse(message.value!.toString()) as { response_id: string; status: string; metadata: { job: string } };
        statuses.add(result.status);
        results.set(result.metadata.job, (results.get(result.metadata.job) ?? new Set()).add(result.response_id));
      },
    });
    await waitUntil('every job has its result', 180_000, () => results.size === JOBS).catch((error) => {
      throw new Error(`${error.message} (${results.size} of ${JOBS})\n${logsOf(first, second).slice(-4000)}`);
    });
    assert.deepEqual([...statuses], ['completed']);
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
  });
});
