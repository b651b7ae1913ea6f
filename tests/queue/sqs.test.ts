// SQS consumers as a specification, against a real ElasticMQ with the AWS SDK as
// the producer: a job in, a result out on the reply queue; duplicates and
// redeliveries run nothing twice; invalid messages are dead-lettered with the
// reason and never block the queue; FIFO keeps order per message group;
// backpressure holds messages in the queue while the backlog is deep; and a
// restarted broker is taken up again without help. Each test has its own
// project and queues.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { QueueResult as validQueueResult } from '../../generated/protocol-validators.js';
import { brokerUnavailable, createSqsQueue, elasticmqSource, sqsClient, sqsEndpoint, startDedicatedElasticMq, type DedicatedElasticMq } from '../support/brokers.js';
import { describeEachStore, withSlice, type TestHub } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';

const SETTINGS = { secretKey: 'queue-tests-secret-key-0123456789' };
const unavailable = await brokerUnavailable('sqs');
const endpoint = unavailable ? '' : (await sqsEndpoint())!;
let unique = 0;
const name = (label: string) => `${label}-${process.pid}-${++unique}`;

let producer: SQSClient;
before(() => {
  if (!unavailable) producer = sqsClient(endpoint);
});
after(() => producer?.destroy());

interface Project {
  projectId: string;
  auth: { Authorization: string };
}

async function freshProject(ctx: () => TestHub): Promise<Project> {
  const key = await ctx().newProjectKey();
  const principal = await ctx().hub.api.authenticate(key);
  return { projectId: principal!.projectId, auth: { Authorization: `Bearer ${key}` } };
}

async function createAgent(ctx: () => TestHub, p: Project, agentName: string, script: unknown[] = [{ text: 'done' }]) {
  const res = await ctx().http.post('/v1/agents').set(p.auth).send({ name: agentName, model: { provider: 'fake', script } });
  assert.equal(res.status, 201, res.text);
}

async function createConsumer(ctx: () => TestHub, p: Project, body: Record<string, unknown>) {
  const res = await ctx().http.post('/v1/queue_consumers').set(p.auth).send(body);
  assertMatchesSpec(res, 'createQueueConsumer');
  assert.equal(res.status, 201, res.text);
  return res.body as { id: string; name: string };
}

async function sendJobs(url: string, jobs: Array<{ body: unknown; group?: string }>): Promise<void> {
  for (let i = 0; i < jobs.length; i += 10) {
    const chunk = jobs.slice(i, i + 10);
    const out = await producer.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: chunk.map((job, j) => ({
          Id: String(j),
          MessageBody: typeof job.body === 'string' ? job.body : JSON.stringify(job.body),
          ...(job.group ? { MessageGroupId: job.group, MessageDeduplicationId: `${i + j}-${Math.random()}` } : {}),
        })),
      }),
    );
    assert.equal(out.Failed?.length ?? 0, 0, JSON.stringify(out.Failed));
  }
}

/** Receives until `count` messages have come, deleting none (they are the test's to read). */
async function receive(url: string, count: number, timeoutMs = 30_000): Promise<Message[]> {
  const got: Message[] = [];
  const deadline = Date.now() + timeoutMs;
  while (got.length < count) {
    if (Date.now() > deadline) throw new Error(`received ${got.length} of ${count} messages from ${url}`);
    const out = await producer.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 300, MessageAttributeNames: ['All'] }));
    got.push(...(out.Messages ?? []));
  }
  return got;
}

async function eventually<T>(probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(100);
  }
}

const from = (queueUrl: string, at = endpoint) => elasticmqSource(queueUrl, at);

const responseCount = (ctx: () => TestHub, p: Project) => ctx().hub.api.responses.count(p.projectId, {});

describeEachStore(
  'SQS consumers',
  (ctx) => {
    test('bad consumer input is answered with problems; credentials are never shown', { skip: unavailable ?? false }, async () => {
      const p = await freshProject(ctx);
      const post = (body: Record<string, unknown>) => ctx().http.post('/v1/queue_consumers').set(p.auth).send(body);
      const sqs = { queue_url: `${endpoint}/000000000000/in` };
      assertProblem(await post({ name: 'x', kind: 'rabbit', sqs }), 400, 'validation-failed');
      const noSource = await post({ name: 'x', kind: 'sqs' });
      assertProblem(noSource, 400, 'validation-failed');
      assert.deepEqual(noSource.body.errors.map((e: { pointer: string }) => e.pointer), ['/sqs']);
      assertProblem(await post({ name: 'x', kind: 'sqs', sqs, kafka: { brokers: ['h:1'], topic: 't', group_id: 'g' } }), 400, 'validation-failed');
      assertProblem(await post({ name: 'x', kind: 'kafka', kafka: { brokers: ['h:1'], topic: 't', group_id: 'g' } }), 400, 'validation-failed');
      assertProblem(await post({ name: 'x', kind: 'sqs', sqs, reply: { topic: 'results' } }), 400, 'validation-failed');
      assertProblem(await post({ name: 'x', kind: 'sqs', sqs: { queue_url: 'ftp://nope' } }), 400, 'validation-failed');
      assertProblem(await post({ name: 'x', kind: 'sqs', sqs, agent: 'nobody' }), 404, 'agent-not-found');
      assertProblem(await post({ name: 'x', kind: 'sqs', sqs, credentials: { mechanism: 'plain', username: 'u', password: 'p' } }), 400, 'validation-failed');

      const secret = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY';
      const created = await post({ name: 'paused-one', kind: 'sqs', sqs, credentials: { access_key_id: 'AKIAEXAMPLE1234', secret_access_key: secret }, paused: true });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(created.body.credentials, { kind: 'sqs', last4: '1234' });
      assertProblem(await post({ name: 'paused-one', kind: 'sqs', sqs }), 409, 'conflict');
      const got = await ctx().http.get(`/v1/queue_consumers/${created.body.id}`).set(p.auth);
      assertMatchesSpec(got, 'getQueueConsumer');
      const list = await ctx().http.get('/v1/queue_consumers').set(p.auth);
      assertMatchesSpec(list, 'listQueueConsumers');
      for (const text of [created.text, got.text, list.text]) assert.ok(!text.includes(secret), 'the secret key is never shown');
      const patched = await ctx().http.patch('/v1/queue_consumers/paused-one').set(p.auth).send({ max_in_flight: 3 });
      assertMatchesSpec(patched, 'updateQueueConsumer');
      assert.deepEqual([patched.body.max_in_flight, patched.body.paused], [3, true]);
      assertProblem(await ctx().http.patch('/v1/queue_consumers/paused-one').set(p.auth).send({}), 400, 'validation-failed');
      const other = await freshProject(ctx);
      assertProblem(await ctx().http.get(`/v1/queue_consumers/${created.body.id}`).set(other.auth), 404, 'not-found');
      const deleted = await ctx().http.delete('/v1/queue_consumers/paused-one').set(p.auth);
      assertMatchesSpec(deleted, 'deleteQueueConsumer');
      assertProblem(await ctx().http.get(`/v1/queue_consumers/${created.body.id}`).set(p.auth), 404, 'not-found');
    });

    test('a job in, its result out on the reply queue, correlated by the idempotency key', { skip: unavailable ?? false }, async () => {
      const p = await freshProject(ctx);
      await createAgent(ctx, p, 'summarizer', [{ text: 'the summary' }]);
      const source = await createSqsQueue(endpoint, name('jobs'));
      const reply = await createSqsQueue(endpoint, name('results'));
      await createConsumer(ctx, p, { name: 'jobs', kind: 'sqs', ...from(source.url), reply: { queue_url: reply.url } });
      await sendJobs(source.url, [{ body: { agent: 'summarizer', input: 'summarize this', idempotency_key: 'job-1', metadata: { order: '42' } } }]);
      const [message] = await receive(reply.url, 1);
      const result = JSON.parse(message.Body!) as Record<string, unknown>;
      assert.ok(validQueueResult(result), JSON.stringify(validQueueResult.errors));
      assert.deepEqual([result.idempotency_key, result.status, result.output_text, result.metadata], ['job-1', 'completed', 'the summary', { order: '42' }]);
      assert.equal(message.MessageAttributes?.['palai-idempotency-key']?.StringValue, 'job-1');
      assert.equal(message.MessageAttributes?.['palai-response-id']?.StringValue, result.response_id);
      const response = await ctx().hub.api.responses.get(p.projectId, String(result.response_id));
      assert.equal(response.agent.name, 'summarizer');
      assert.equal(await responseCount(ctx, p), 1);
    });

    test('150 jobs with duplicates and redeliveries of admitted jobs mixed in run exactly 150 responses', { skip: unavailable ?? false }, async () => {
      const p = await freshProject(ctx);
      await createAgent(ctx, p, 'bulk');
      const source = await createSqsQueue(endpoint, name('bulk'));
      const consumer = await createConsumer(ctx, p, { name: 'bulk', kind: 'sqs', agent: 'bulk', max_in_flight: 20, ...from(source.url) });
      const jobs = Array.from({ length: 150 }, (_, i) => ({ body: { input: `job ${i}`, idempotency_key: `bulk-${i}` } }));
      // A redelivery: a job admitted before (its process died before deleting the message) comes again.
      const config = await withSlice(ctx().hub, 'queue').queues.config(p.projectId, consumer.id);
      for (const job of jobs.slice(0, 20)) assert.equal((await withSlice(ctx().hub, 'queue').queues.admit(config!, { body: JSON.stringify(job.body), messageId: `earlier-${job.body.idempotency_key}` })).kind, 'admitted');
      const duplicates = jobs.filter((_, i) => i % 5 === 0);
      await sendJobs(source.url, [...jobs, ...duplicates].sort(() => Math.random() - 0.5));
      await eventually(() => sourceDrained(source.url), 60_000);
      assert.equal(await responseCount(ctx, p), 150);
      const metrics = await ctx().http.get('/metrics');
      const line = (outcome: string) => Number(new RegExp(`palai_queue_messages_total\\{consumer="${consumer.id}",outcome="${outcome}"\\} (\\d+)`).exec(metrics.text)?.[1] ?? 0);
      assert.equal(line('admitted'), 130);
      assert.equal(line('duplicate'), 20 + duplicates.length);
    });

    test('invalid messages go to the dead-letter queue with the reason and never block the queue', { skip: unavailable ?? false }, async () => {
      const p = await freshProject(ctx);
      await createAgent(ctx, p, 'worker-bee');
      const source = await createSqsQueue(endpoint, name('mixed'));
      const dead = await createSqsQueue(endpoint, name('dead'));
      await createConsumer(ctx, p, { name: 'mixed', kind: 'sqs', ...from(source.url), dead_letter: { queue_url: dead.url } });
      await sendJobs(source.url, [
        { body: 'this is not json' },
        { body: { agent: 'worker-bee' } },
        { body: { agent: 'worker-bee', input: 'hi', surprise: true } },
        { body: { agent: 'nobody-here', input: 'hi' } },
        { body: { input: 'no agent anywhere' } },
        { body: { agent: 'worker-bee', input: 'a valid one' } },
      ]);
      const deadLettered = await receive(dead.url, 5);
      const reasons = deadLettered.map((m) => m.MessageAttributes?.['palai-error-reason']?.StringValue ?? '').sort();
      assert.equal(reasons.length, 5);
      assert.ok(reasons.some((r) => /not JSON/.test(r)), reasons.join(' | '));
      assert.ok(reasons.some((r) => /input is required/.test(r)), reasons.join(' | '));
      assert.ok(reasons.some((r) => /surprise is not a known field/.test(r)), reasons.join(' | '));
      assert.ok(reasons.some((r) => /nobody-here/.test(r)), reasons.join(' | '));
      assert.ok(reasons.some((r) => /names no agent/.test(r)), reasons.join(' | '));
      assert.ok(deadLettered.some((m) => m.Body === 'this is not json'), 'the original body is kept');
      await eventually(async () => (await responseCount(ctx, p)) === 1);
      await eventually(() => sourceDrained(source.url));
    });

    test('a FIFO queue keeps order per message group; session_key threads each group into one session', { skip: unavailable ?? false }, async () => {
      const p = await freshProject(ctx);
      await createAgent(ctx, p, 'ordered');
      const source = await createSqsQueue(endpoint, `${name('ordered')}.fifo`);
      await createConsumer(ctx, p, { name: 'ordered', kind: 'sqs', agent: 'ordered', ...from(source.url) });
      const groups = ['alpha', 'beta', 'gamma'];
      const jobs = groups.flatMap((g) => Array.from({ length: 6 }, (_, i) => ({ group: g, body: { input: `${g} ${i}`, session_key: g, idempotency_key: `${g}-${i}` } })));
      await sendJobs(source.url, jobs);
      await eventually(async () => (await ctx().hub.api.responses.count(p.projectId, { status: 'completed' })) === jobs.length);
      for (const g of groups) {
        const page = await ctx().hub.api.responses.list(p.projectId, { status: 'completed' }, { limit: 100, order: 'asc' });
        const inputs = (await Promise.all(page.data.map(async (r) => ({ r, input: await ctx().hub.api.responses.inputItems(p.projectId, r.id) }))))
          .map(({ r, input }) => ({ session: r.session_id, text: JSON.stringify(input) }))
          .filter((x) => x.text.includes(`${g} `));
        assert.equal(new Set(inputs.map((x) => x.session)).size, 1, `group ${g} is one session: ${JSON.stringify(inputs)}`);
        assert.deepEqual(inputs.map((x) => /\b(\d)\b/.exec(x.text)?.[1]), ['0', '1', '2', '3', '4', '5'], `group ${g} in order`);
      }
    });
  },
  SETTINGS,
);

describeEachStore(
  'SQS consumers under backpressure',
  (ctx) => {
    test('a deep backlog holds messages in the queue; they are taken once it drains', { skip: unavailable ?? false }, async () => {
      const p = await freshProject(ctx);
      await createAgent(ctx, p, 'slowpoke', [{ text: 'slow', delay_ms: 150 }]);
      const source = await createSqsQueue(endpoint, name('deep'));
      await createConsumer(ctx, p, { name: 'deep', kind: 'sqs', agent: 'slowpoke', max_in_flight: 1, ...from(source.url) });
      await sendJobs(source.url, Array.from({ length: 12 }, (_, i) => ({ body: { input: `deep ${i}` } })));
      // The backlog (queued responses) may pass the bound of 2 by what the one consumer holds (1).
      let deepest = 0;
      await eventually(async () => {
        deepest = Math.max(deepest, await ctx().hub.api.responses.count(p.projectId, { status: 'queued' }));
        return (await responseCount(ctx, p)) === 12 && (await ctx().hub.api.responses.count(p.projectId, { status: ['queued', 'in_progress'] })) === 0;
      }, 90_000);
      assert.ok(deepest <= 3, `the backlog reached ${deepest}`);
    });
  },
  { ...SETTINGS, queueMaxBacklog: 2, workerConcurrency: 1 },
);

describeEachStore(
  'SQS consumers and a broker restart',
  (ctx) => {
    let broker: DedicatedElasticMq | null = null;
    after(async () => broker?.close());
    test('a consumer whose broker restarts takes up its queue again by itself', { skip: unavailable ?? false }, async () => {
      broker = await startDedicatedElasticMq();
      const p = await freshProject(ctx);
      await createAgent(ctx, p, 'steady');
      const source = await createSqsQueue(broker.endpoint, name('steady'));
      const client = sqsClient(broker.endpoint);
      try {
        await createConsumer(ctx, p, { name: 'steady', kind: 'sqs', agent: 'steady', ...from(source.url, broker.endpoint) });
        await client.send(new SendMessageCommand({ QueueUrl: source.url, MessageBody: JSON.stringify({ input: 'before' }) }));
        await eventually(async () => (await responseCount(ctx, p)) === 1);
        await broker.restart();
        await client.send(new SendMessageCommand({ QueueUrl: source.url, MessageBody: JSON.stringify({ input: 'after' }) }));
        await eventually(async () => (await responseCount(ctx, p)) === 2, 60_000);
      } finally {
        client.destroy();
      }
    });
  },
  SETTINGS,
  // The restart is the broker's; one store is enough, and the store the test run prefers for it is PostgreSQL.
  { stores: ['postgres'] },
);

/** True when the queue holds no message, visible or in flight. */
async function sourceDrained(url: string): Promise<boolean> {
  const { Attributes } = await producer.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }));
  return Attributes?.ApproximateNumberOfMessages === '0' && Attributes?.ApproximateNumberOfMessagesNotVisible === '0';
}
