// SQS consumers as a specification, against a real ElasticMQ with the AWS SDK as
// the producer: a job in, a result out on the reply queue; duplicates and
// redeliveries run nothing twice; invalid messages are dead-lettered with the
// reason and never block the queue; FIFO keeps order per message group;
// backpressure holds messages in the queue while the backlog is deep; a
// restarted broker is taken up again without help; a job whose admission keeps
// failing is dead-lettered after max_attempts without stalling its group; and a
// consumer that cannot reach its queue says so in its health until a PATCH
// mends it. Each test has its own project and queues.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import request from 'supertest';
import { startHub } from '../../cli/hub.js';
import { createApiKey } from '../../core/auth/api-keys.js';
import { createProject } from '../../core/auth/projects.js';
import { createLogger } from '../../core/logger.js';
import type { QueueConsumerConfig } from '../../core/surfaces/queue/queue-port.js';
import { describeError } from '../../adapters/queue/health.js';
import { QueueResult as validQueueResult } from '../../generated/protocol-validators.js';
import type { QueueConsumer, QueueConsumerHealth } from '../../generated/schemas.js';
import {
  brokerUnavailable,
  createSqsQueue,
  elasticmqSource,
  sqsClient,
  sqsEndpoint,
  startDedicatedElasticMq,
  type DedicatedElasticMq,
} from '../support/brokers.js';
import { describeEachStore, testConfig, withSlice, type TestHub } from '../support/hub.js';
import { openTestDatabase, storeKinds } from '../support/stores.js';
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
  const res = await ctx()
    .http.post('/v1/agents')
    .set(p.auth)
    .send({ name: agentName, model: { provider: 'fake', script } });
  assert.equal(res.status, 201, res.text);
}

async function createConsumer(ctx: () => TestHub, p: Project, body: Record<string, unknown>) {
  const res = await ctx().http.post('/v1/queue_consumers').set(p.auth).send(body);
  assertMatchesSpec(res, 'createQueueConsumer');
  assert.equal(res.status, 201, res.text);
  return res.body as QueueConsumer;
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
    const out = await producer.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 300, MessageAttributeNames: ['All'] }),
    );
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

/**
 * Makes the test database refuse the job record of every job whose idempotency
 * key starts with `poison-`: an error of the store that is not an outage
 * (SQLSTATE P0001), after the job has parsed and its response was written.
 */
async function refusePoisonJobs(ctx: () => TestHub): Promise<void> {
  await ctx().hub.kernel.db.exec(`
    CREATE OR REPLACE FUNCTION refuse_poison_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.idempotency_key LIKE 'poison-%' THEN RAISE EXCEPTION 'the test database refuses job %', NEW.idempotency_key; END IF;
      RETURN NEW;
    END $$;
    DROP TRIGGER IF EXISTS refuse_poison_jobs ON queue_jobs;
    CREATE TRIGGER refuse_poison_jobs BEFORE INSERT ON queue_jobs FOR EACH ROW EXECUTE FUNCTION refuse_poison_jobs();`);
}

/**
 * Jobs keyed `flaky-…` meet the store down (SQLSTATE 58000, an outage) on their
 * first `outages` tries, then one refusal that is not an outage, then go through.
 */
async function flakyStore(ctx: () => TestHub, outages: number): Promise<void> {
  await ctx().hub.kernel.db.exec(`
    CREATE SEQUENCE IF NOT EXISTS flaky_tries;
    CREATE OR REPLACE FUNCTION flaky_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE try bigint;
    BEGIN
      IF NEW.idempotency_key LIKE 'flaky-%' THEN
        try := nextval('flaky_tries');
        IF try <= ${outages} THEN RAISE EXCEPTION 'the test database is down' USING ERRCODE = '58000'; END IF;
        IF try = ${outages + 1} THEN RAISE EXCEPTION 'the test database refuses the job once'; END IF;
      END IF;
      RETURN NEW;
    END $$;
    DROP TRIGGER IF EXISTS flaky_jobs ON queue_jobs;
    CREATE TRIGGER flaky_jobs BEFORE INSERT ON queue_jobs FOR EACH ROW EXECUTE FUNCTION flaky_jobs();`);
}

/** A loopback port nothing listens on. */
async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const messagesTotal = async (ctx: () => TestHub, consumerId: string, outcome: string): Promise<number> => {
  const metrics = await ctx().http.get('/metrics');
  return Number(new RegExp(`palai_queue_messages_total\\{consumer="${consumerId}",outcome="${outcome}"\\} (\\d+)`).exec(metrics.text)?.[1] ?? 0);
};

/** Reads the consumer until its health is in `state`. */
async function healthOf(http: TestHub['http'], p: Pick<Project, 'auth'>, id: string, state: QueueConsumerHealth['state']) {
  return eventually(async () => {
    const got = await http.get(`/v1/queue_consumers/${id}`).set(p.auth);
    return (got.body.health as QueueConsumerHealth | undefined)?.state === state && got;
  }, 60_000);
}

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
      assert.deepEqual(
        noSource.body.errors.map((e: { pointer: string }) => e.pointer),
        ['/sqs'],
      );
      assertProblem(await post({ name: 'x', kind: 'sqs', sqs, kafka: { brokers: ['h:1'], topic: 't', group_id: 'g' } }), 400, 'validation-failed');
      assertProblem(await post({ name: 'x', kind: 'kafka', kafka: { brokers: ['h:1'], topic: 't', group_id: 'g' } }), 400, 'validation-failed');
      assertProblem(await post({ name: 'x', kind: 'sqs', sqs, reply: { topic: 'results' } }), 400, 'validation-failed');
      assertProblem(await post({ name: 'x', kind: 'sqs', sqs: { queue_url: 'ftp://nope' } }), 400, 'validation-failed');
      assertProblem(await post({ name: 'x', kind: 'sqs', sqs, agent: 'nobody' }), 404, 'agent-not-found');
      assertProblem(await post({ name: 'x', kind: 'sqs', sqs, credentials: { mechanism: 'plain', username: 'u', password: 'p' } }), 400, 'validation-failed');

      const secret = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY';
      const created = await post({
        name: 'paused-one',
        kind: 'sqs',
        sqs,
        credentials: { access_key_id: 'AKIAEXAMPLE1234', secret_access_key: secret },
        paused: true,
      });
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
      assert.equal(patched.body.health.state, 'paused');
      const patch = (body: Record<string, unknown>) => ctx().http.patch('/v1/queue_consumers/paused-one').set(p.auth).send(body);
      for (const [body, pointer] of [
        [{ kafka: { brokers: ['h:1'], topic: 't', group_id: 'g' } }, '/kafka'],
        [{ credentials: { mechanism: 'plain', username: 'u', password: 'p' } }, '/credentials'],
        [{ dead_letter: { topic: 'dead' } }, '/dead_letter'],
        [{ sqs: { queue_url: 'ftp://nope' } }, '/sqs/queue_url'],
      ] as const) {
        const refused = await patch(body);
        assertProblem(refused, 400, 'validation-failed');
        assert.deepEqual(
          refused.body.errors.map((e: { pointer: string }) => e.pointer),
          [pointer],
          refused.text,
        );
      }
      const cleared = await patch({ credentials: null });
      assertMatchesSpec(cleared, 'updateQueueConsumer');
      assert.equal(cleared.body.credentials, null);
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
      for (const job of jobs.slice(0, 20))
        assert.equal(
          (await withSlice(ctx().hub, 'queue').queues.admit(config!, { body: JSON.stringify(job.body), messageId: `earlier-${job.body.idempotency_key}` }))
            .kind,
          'admitted',
        );
      const duplicates = jobs.filter((_, i) => i % 5 === 0);
      await sendJobs(
        source.url,
        [...jobs, ...duplicates].sort(() => Math.random() - 0.5),
      );
      await eventually(() => sourceDrained(source.url), 60_000);
      assert.equal(await responseCount(ctx, p), 150);
      assert.equal(await messagesTotal(ctx, consumer.id, 'admitted'), 130);
      assert.equal(await messagesTotal(ctx, consumer.id, 'duplicate'), 20 + duplicates.length);
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
        // JSON escapes that decode to text no store can hold: U+0000, and half a surrogate pair.
        { body: '{"agent": "worker-bee", "input": "nul \\u0000 inside"}' },
        { body: '{"agent": "worker-bee", "input": "ok", "metadata": {"half": "\\ud83d"}}' },
        { body: { agent: 'worker-bee', input: 'a valid one' } },
      ]);
      const deadLettered = await receive(dead.url, 7);
      const reasons = deadLettered.map((m) => m.MessageAttributes?.['palai-error-reason']?.StringValue ?? '').sort();
      assert.equal(reasons.length, 7);
      assert.ok(
        reasons.some((r) => /the job's \/input contains U\+0000 \(NUL\)/.test(r)),
        reasons.join(' | '),
      );
      assert.ok(
        reasons.some((r) => /the job's \/metadata\/half contains a lone UTF-16 surrogate/.test(r)),
        reasons.join(' | '),
      );
      assert.ok(
        reasons.some((r) => /not JSON/.test(r)),
        reasons.join(' | '),
      );
      assert.ok(
        reasons.some((r) => /input is required/.test(r)),
        reasons.join(' | '),
      );
      assert.ok(
        reasons.some((r) => /surprise is not a known field/.test(r)),
        reasons.join(' | '),
      );
      assert.ok(
        reasons.some((r) => /nobody-here/.test(r)),
        reasons.join(' | '),
      );
      assert.ok(
        reasons.some((r) => /names no agent/.test(r)),
        reasons.join(' | '),
      );
      assert.ok(
        deadLettered.some((m) => m.Body === 'this is not json'),
        'the original body is kept',
      );
      await eventually(async () => (await responseCount(ctx, p)) === 1);
      await eventually(() => sourceDrained(source.url));
    });

    test('a FIFO queue keeps order per message group; session_key threads each group into one session', { skip: unavailable ?? false }, async () => {
      const p = await freshProject(ctx);
      await createAgent(ctx, p, 'ordered');
      const source = await createSqsQueue(endpoint, `${name('ordered')}.fifo`);
      await createConsumer(ctx, p, { name: 'ordered', kind: 'sqs', agent: 'ordered', ...from(source.url) });
      const groups = ['alpha', 'beta', 'gamma'];
      const jobs = groups.flatMap((g) =>
        Array.from({ length: 6 }, (_, i) => ({ group: g, body: { input: `${g} ${i}`, session_key: g, idempotency_key: `${g}-${i}` } })),
      );
      await sendJobs(source.url, jobs);
      await eventually(async () => (await ctx().hub.api.responses.count(p.projectId, { status: 'completed' })) === jobs.length);
      for (const g of groups) {
        const page = await ctx().hub.api.responses.list(p.projectId, { status: 'completed' }, { limit: 100, order: 'asc' });
        const inputs = (await Promise.all(page.data.map(async (r) => ({ r, input: await ctx().hub.api.responses.inputItems(p.projectId, r.id) }))))
          .map(({ r, input }) => ({ session: r.session_id, text: JSON.stringify(input) }))
          .filter((x) => x.text.includes(`${g} `));
        assert.equal(new Set(inputs.map((x) => x.session)).size, 1, `group ${g} is one session: ${JSON.stringify(inputs)}`);
        assert.deepEqual(
          inputs.map((x) => /\b(\d)\b/.exec(x.text)?.[1]),
          ['0', '1', '2', '3', '4', '5'],
          `group ${g} in order`,
        );
      }
    });

    test(
      'a job whose admission keeps failing is dead-lettered with the reason after max_attempts receives, and its FIFO group goes on',
      { skip: unavailable ?? false },
      async () => {
        const p = await freshProject(ctx);
        await createAgent(ctx, p, 'picky');
        await refusePoisonJobs(ctx);
        const source = await createSqsQueue(endpoint, `${name('poisoned')}.fifo`);
        const dead = await createSqsQueue(endpoint, `${name('poisoned-dead')}.fifo`);
        const consumer = await createConsumer(ctx, p, {
          name: 'poisoned',
          kind: 'sqs',
          agent: 'picky',
          ...elasticmqSource(source.url, endpoint, { max_attempts: 2, visibility_seconds: 5 }),
          dead_letter: { queue_url: dead.url },
        });
        await sendJobs(
          source.url,
          ['poison-1', 'after-1', 'after-2'].map((key) => ({ group: 'one-group', body: { input: key, idempotency_key: key } })),
        );
        const [letter] = await receive(dead.url, 1, 60_000);
        assert.equal(JSON.parse(letter.Body!).idempotency_key, 'poison-1', 'the original body is kept');
        const reason = letter.MessageAttributes?.['palai-error-reason']?.StringValue ?? '';
        assert.match(reason, /^admitting the job failed: the test database refuses job poison-1 \(after 2 attempts\)$/);
        // Behind it in its group, the other two are admitted, in order.
        await eventually(async () => (await responseCount(ctx, p)) === 2, 60_000);
        const page = await ctx().hub.api.responses.list(p.projectId, {}, { limit: 10, order: 'asc' });
        const inputs = await Promise.all(page.data.map(async (r) => JSON.stringify(await ctx().hub.api.responses.inputItems(p.projectId, r.id))));
        assert.deepEqual(
          inputs.map((text) => /after-\d/.exec(text)?.[0]),
          ['after-1', 'after-2'],
        );
        await eventually(() => sourceDrained(source.url));
        assert.equal(await messagesTotal(ctx, consumer.id, 'dead_lettered'), 1);
      },
    );

    test(
      "Palai's own outage does not count toward max_attempts: the message is tried again in place and admitted",
      { skip: unavailable ?? false },
      async () => {
        const p = await freshProject(ctx);
        await createAgent(ctx, p, 'steadfast');
        await flakyStore(ctx, 3);
        const source = await createSqsQueue(endpoint, name('outage'));
        const dead = await createSqsQueue(endpoint, name('outage-dead'));
        const consumer = await createConsumer(ctx, p, {
          name: 'outage',
          kind: 'sqs',
          agent: 'steadfast',
          ...elasticmqSource(source.url, endpoint, { max_attempts: 2, visibility_seconds: 5 }),
          dead_letter: { queue_url: dead.url },
        });
        await sendJobs(source.url, [{ body: { input: 'through the outage', idempotency_key: 'flaky-1' } }]);
        await eventually(async () => (await responseCount(ctx, p)) === 1, 60_000);
        await eventually(() => sourceDrained(source.url));
        // Three outages on the first receive, held in place; one refusal sent it back; the second receive admitted it.
        assert.equal(await messagesTotal(ctx, consumer.id, 'received'), 2);
        assert.equal(await messagesTotal(ctx, consumer.id, 'dead_lettered'), 0);
        assert.ok(await sourceDrained(dead.url), 'nothing was dead-lettered');
      },
    );

    test(
      'a consumer pointed at a wrong endpoint shows failing health with the error and no secret; a PATCH to the right queue and credentials makes it run',
      { skip: unavailable ?? false },
      async () => {
        const p = await freshProject(ctx);
        await createAgent(ctx, p, 'patient');
        const wrong = `http://127.0.0.1:${await unusedPort()}`;
        const secret = 'wrong-endpoint-secret-KEY-Kq93xZ';
        const created = await createConsumer(ctx, p, {
          name: 'unreachable',
          kind: 'sqs',
          agent: 'patient',
          sqs: { queue_url: `${wrong}/000000000000/jobs`, endpoint: wrong, region: 'elasticmq', wait_seconds: 1 },
          credentials: { access_key_id: 'AKIAWRONGKEY0001', secret_access_key: secret },
        });
        assert.equal(created.health.state, 'starting');
        const failing = await healthOf(ctx().http, p, created.id, 'failing');
        assertMatchesSpec(failing, 'getQueueConsumer');
        const health = failing.body.health as QueueConsumerHealth;
        assert.match(
          health.last_error!,
          new RegExp(`^starting the consumer of ${wrong}/000000000000/jobs failed: .*ECONNREFUSED ${wrong.slice('http://'.length)}`),
        );
        assert.equal(typeof health.last_error_at, 'number');
        assert.ok(health.since >= created.updated_at);
        const list = await ctx().http.get('/v1/queue_consumers').set(p.auth);
        assert.equal(list.body.data.find((c: { id: string }) => c.id === created.id).health.state, 'failing');
        for (const text of [failing.text, list.text]) assert.ok(!text.includes(secret), 'the secret key is never shown');

        const source = await createSqsQueue(endpoint, name('reachable'));
        const patched = await ctx().http.patch(`/v1/queue_consumers/${created.id}`).set(p.auth).send(from(source.url));
        assertMatchesSpec(patched, 'updateQueueConsumer');
        assert.equal(patched.status, 200, patched.text);
        assert.deepEqual(patched.body.health, { state: 'starting', since: patched.body.updated_at, last_error: null, last_error_at: null });
        assert.deepEqual(patched.body.credentials, { kind: 'sqs', last4: from(source.url).credentials.access_key_id.slice(-4) });
        const { rows } = await ctx().hub.kernel.db.query<{ n: number }>('SELECT count(*)::integer AS n FROM secrets WHERE project_id = $1', [p.projectId]);
        assert.equal(rows[0].n, 1, 'the replaced credentials are deleted');
        const running = await healthOf(ctx().http, p, created.id, 'running');
        assert.equal(running.body.health.last_error, null);
        await sendJobs(source.url, [{ body: { input: 'at last' } }]);
        await eventually(async () => (await responseCount(ctx, p)) === 1);
      },
    );
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
      await sendJobs(
        source.url,
        Array.from({ length: 12 }, (_, i) => ({ body: { input: `deep ${i}` } })),
      );
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
        // ElasticMQ restores its persisted queues just after it starts answering: the test's own send waits for them.
        await eventually(() =>
          client.send(new GetQueueAttributesCommand({ QueueUrl: source.url })).then(
            () => true,
            () => false,
          ),
        );
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

test("an error's text keeps its name and message, in text the store can hold, and never the consumer's secrets", () => {
  const config: QueueConsumerConfig = {
    id: 'qc_x',
    projectId: 'proj_x',
    name: 'x',
    agent: null,
    reply: null,
    deadLetter: null,
    maxInFlight: 1,
    updatedAt: new Date(),
    kind: 'sqs',
    sqs: { queue_url: 'http://127.0.0.1:1/000000000000/q', wait_seconds: 1, visibility_seconds: 30 },
    credentials: { access_key_id: 'AKIAEXAMPLE', secret_access_key: 'the-secret-half', session_token: 'the-session-token' },
  };
  const leaky = Object.assign(new Error('the request signed with the-secret-half and the-session-token was refused'), { name: 'SignatureDoesNotMatch' });
  assert.equal(describeError(leaky, config), 'SignatureDoesNotMatch: the request signed with [redacted] and [redacted] was refused');
  const refused = Object.assign(new Error('connect ECONNREFUSED ::1:1'), { code: 'ECONNREFUSED' });
  assert.equal(
    describeError(new AggregateError([refused, new Error('connect ECONNREFUSED 127.0.0.1:1')]), config),
    'AggregateError: connect ECONNREFUSED ::1:1; connect ECONNREFUSED 127.0.0.1:1',
  );
  // Text no store can hold (a broker's NUL, half a surrogate pair) is made storable, so the health report is kept.
  assert.equal(describeError(new Error('bad\u0000byte and half \ud800 pair'), config), 'Error: bad\ufffdbyte and half \ufffd pair');
});

test(
  'a consumer of a queue that does not exist shows failing health; the log warns once, and says once that it recovered when the queue appears',
  { skip: unavailable ?? false },
  async () => {
    const database = await openTestDatabase(storeKinds[0]);
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write: (chunk, _encoding, done) =>
        void (
          lines.push(
            ...String(chunk)
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l)),
          ),
          done()
        ),
    });
    const hub = await startHub({ config: testConfig(SETTINGS), db: database.db, logger: createLogger('debug', sink) });
    try {
      const project = await createProject(database.db, 'missing-queue');
      const p = { auth: { Authorization: `Bearer ${(await createApiKey(database.db, project.id, 'test')).secret}` } };
      const http = request(hub.app);
      assert.equal(
        (
          await http
            .post('/v1/agents')
            .set(p.auth)
            .send({ name: 'waiting', model: { provider: 'fake', script: [{ text: 'done' }] } })
        ).status,
        201,
      );
      const queueName = name('not-yet');
      const queueUrl = `${endpoint}/000000000000/${queueName}`;
      const created = await http
        .post('/v1/queue_consumers')
        .set(p.auth)
        .send({ name: 'not-yet', kind: 'sqs', agent: 'waiting', ...from(queueUrl) });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id as string;
      const failing = await healthOf(http, p, id, 'failing');
      assert.match(
        failing.body.health.last_error,
        new RegExp(`^starting the consumer of ${queueUrl} failed: QueueDoesNotExist: The specified queue does not exist`),
      );
      assert.ok(!failing.text.includes(from(queueUrl).credentials.secret_access_key), 'the secret key is never shown');
      const mine = () => lines.filter((line) => line.consumer === id);
      // The start is retried, and each retry that fails alike is a debug line only.
      await eventually(async () => mine().some((line) => line.msg === 'the queue consumer still cannot reach its source'), 60_000);

      await createSqsQueue(endpoint, queueName);
      await healthOf(http, p, id, 'running');
      assert.equal(
        (await http.get(`/v1/queue_consumers/${id}`).set(p.auth)).body.health.last_error,
        failing.body.health.last_error,
        'the last error stays on record',
      );
      const warnings = mine().filter((line) => (line.level as number) >= 40);
      assert.deepEqual(
        warnings.map((line) => line.msg),
        ['the queue consumer cannot reach its source; it is tried again until it can'],
      );
      assert.equal(warnings[0].error, failing.body.health.last_error);
      assert.equal(mine().filter((line) => line.msg === 'the queue consumer reaches its source again').length, 1);
      for (const line of mine()) assert.ok(!JSON.stringify(line).includes('stack'), 'no stack trace is logged');
    } finally {
      await hub.close();
      await database.drop();
    }
  },
);

/** True when the queue holds no message, visible or in flight. */
async function sourceDrained(url: string): Promise<boolean> {
  const { Attributes } = await producer.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
  );
  return Attributes?.ApproximateNumberOfMessages === '0' && Attributes?.ApproximateNumberOfMessagesNotVisible === '0';
}
