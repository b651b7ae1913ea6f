// Real message brokers for the queue tests: Apache Kafka 4.x (KRaft) and
// ElasticMQ (the SQS API), run by deploy/dev/kafka.sh and elasticmq.sh.
//
// A test file asks for the shared broker of its process (`kafkaBrokers()`,
// `sqsEndpoint()`): the one named by PALAI_TEST_KAFKA_BROKERS /
// PALAI_TEST_SQS_ENDPOINT when it answers (CI starts them with
// deploy/dev/brokers.sh), otherwise one started here on free ports and killed
// when the process exits. When neither works the suite is skipped with the
// reason (`brokerUnavailable`), or fails under PALAI_REQUIRE_SERVICES=1.
// A test that stops, crashes or restarts a broker takes a dedicated one.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Kafka, logLevel } from 'kafkajs';
import { until } from './until.js';

// kafkajs warns once per producer about its partitioner change in 2.0; the
// AWS SDK warns on every test process that its 2027 releases need Node 22.
process.env.KAFKAJS_NO_PARTITIONER_WARNING ??= '1';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const requireServices = process.env.PALAI_REQUIRE_SERVICES === '1';
const scripts = fileURLToPath(new URL('../../deploy/dev/', import.meta.url));
/** A cold start fetches the jars from Maven Central first (about a minute). */
const SCRIPT_TIMEOUT_MS = 300_000;

export type BrokerKind = 'kafka' | 'sqs';

/** A Kafka client that logs nothing (kafkajs logs every retry by default). */
export function kafkaClient(brokers: string[], clientId = 'palai-test'): Kafka {
  return new Kafka({ clientId, brokers, logLevel: logLevel.NOTHING });
}

/** An SQS client for ElasticMQ: its region, dummy static credentials. */
export function sqsClient(endpoint: string): SQSClient {
  return new SQSClient({ endpoint, region: 'elasticmq', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
}

/** Creates a topic (idempotent) and waits until every partition has a leader. */
export async function createTopic(brokers: string[], name: string, partitions = 1): Promise<void> {
  const admin = kafkaClient(brokers, 'palai-test-admin').admin();
  await admin.connect();
  let created = false;
  try {
    // Not kafkajs's waitForLeaders: it gives up at UNKNOWN_TOPIC_OR_PARTITION, which a KRaft
    // broker answers for a moment after the create (longer after its own start), until its
    // metadata has the topic. A retriable answer to the create or the metadata is asked again.
    await until(
      `topic ${name} has a leader for each of its ${partitions} partitions`,
      async () => {
        try {
          if (!created) await admin.createTopics({ topics: [{ topic: name, numPartitions: partitions }] });
          created = true;
          const [topic] = (await admin.fetchTopicMetadata({ topics: [name] })).topics;
          return topic?.partitions.length === partitions && topic.partitions.every((p) => p.leader >= 0);
        } catch (error) {
          if ((error as { retriable?: boolean }).retriable) return false;
          throw error;
        }
      },
      50,
    );
  } finally {
    await admin.disconnect();
  }
}

export interface SqsQueue {
  url: string;
  /** For a redrive policy's deadLetterTargetArn. */
  arn: string;
}

/**
 * A queue consumer's ElasticMQ source: ElasticMQ checks no signature, but the
 * AWS SDK signs with some credentials, kept in the secret store like real ones.
 */
export const elasticmqSource = (queueUrl: string, endpoint: string, sqs: Record<string, unknown> = {}) => ({
  sqs: { queue_url: queueUrl, endpoint, region: 'elasticmq', wait_seconds: 1, ...sqs },
  credentials: { access_key_id: 'elasticmq-test', secret_access_key: 'elasticmq-test-secret' },
});

/** Creates a queue (FIFO when the name ends in `.fifo`) with the given attributes. */
export async function createSqsQueue(endpoint: string, name: string, attributes: Record<string, string> = {}): Promise<SqsQueue> {
  const client = sqsClient(endpoint);
  try {
    const fifo = name.endsWith('.fifo') ? { FifoQueue: 'true' } : {};
    const created = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: { ...fifo, ...attributes } }));
    const url = created.QueueUrl!;
    const { Attributes } = await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
    return { url, arn: Attributes!.QueueArn! };
  } finally {
    client.destroy();
  }
}

// ---- probes ----

/** Null when a metadata request to the brokers answers; otherwise why not. */
async function kafkaProblem(brokers: string[]): Promise<string | null> {
  const admin = new Kafka({
    clientId: 'palai-test-probe',
    brokers,
    connectionTimeout: 2000,
    requestTimeout: 3000,
    retry: { retries: 1 },
    logLevel: logLevel.NOTHING,
  }).admin();
  try {
    await admin.connect();
    await admin.listTopics();
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

async function sqsProblem(endpoint: string): Promise<string | null> {
  try {
    const response = await fetch(`${endpoint}/?Action=ListQueues`, { signal: AbortSignal.timeout(3000) });
    await response.arrayBuffer();
    return response.ok ? null : `ListQueues answered ${response.status}`;
  } catch (error) {
    return (error as Error).message;
  }
}

// ---- running the deploy/dev scripts ----

/** N distinct free loopback ports (all held open at once, so none repeats). */
async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer());
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', resolve);
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  return ports;
}

function script(name: string, args: string[]): Promise<void> {
  // The scripts kill the broker when this process is gone, even by SIGKILL.
  const env = { ...process.env, PALAI_BROKER_OWNER_PID: String(process.pid) };
  return new Promise((resolve, reject) => {
    execFile('bash', [join(scripts, name), ...args], { env, timeout: SCRIPT_TIMEOUT_MS }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      const tail = stderr.trim().split('\n').slice(-15).join('\n');
      reject(new Error(`deploy/dev/${name} ${args.join(' ')} failed (${error.code ?? error.signal}):\n${tail}`));
    });
  });
}

/** Brokers still up at exit, killed synchronously (an exit handler cannot await). */
const running = new Map<string, { name: string; args: string[] }>();
process.on('exit', () => {
  for (const [dir, { name, args }] of running) {
    spawnSync('bash', [join(scripts, name), 'kill', ...args], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A broker of ours: start/stop/kill keep its data; close removes it. */
interface Controlled {
  start(): Promise<void>;
  stop(): Promise<void>;
  kill(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a broker in a fresh temp dir on free ports, one per port option. */
async function launch(name: string, portOptions: string[], extra: string[]): Promise<{ ports: number[]; controls: Controlled }> {
  const dir = mkdtempSync(join(tmpdir(), `palai-${name.replace('.sh', '')}-`));
  running.set(dir, { name, args: ['--dir', dir] });
  let ports: number[] = [];
  let args: string[] = [];
  for (let attempt = 1; ; attempt++) {
    ports = await freePorts(portOptions.length);
    args = [...portOptions.flatMap((option, i) => [option, String(ports[i])]), '--dir', dir];
    try {
      await script(name, ['start', ...args, ...extra]);
      break;
    } catch (error) {
      const message = (error as Error).message;
      // A port taken between the probe and the bind is worth two more tries on
      // other ports; any other failed start one more (it is reported either way).
      const retry = /already in use/.test(message) ? attempt < 3 : attempt < 2;
      // A start that timed out here may have left its JVM running.
      await script(name, ['kill', '--dir', dir]).catch(() => undefined);
      if (retry) console.error(`starting ${name} (attempt ${attempt}) failed, trying again on other ports:\n${message}`);
      if (!retry) {
        running.delete(dir);
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  running.set(dir, { name, args });
  const controls: Controlled = {
    start: () => script(name, ['start', ...args, ...extra, '--keep-data']),
    stop: () => script(name, ['stop', ...args]),
    kill: () => script(name, ['kill', ...args]),
    async restart() {
      await controls.stop();
      await controls.start();
    },
    async close() {
      await script(name, ['kill', ...args]);
      running.delete(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return { ports, controls };
}

export interface DedicatedKafka extends Controlled {
  brokers: string[];
}

/** A private single-node Kafka on free ports in a temp dir; its topics and offsets survive stop/start. */
export async function startDedicatedKafka(): Promise<DedicatedKafka> {
  const { ports, controls } = await launch('kafka.sh', ['--port', '--controller-port'], []);
  return { brokers: [`127.0.0.1:${ports[0]}`], ...controls };
}

export interface DedicatedElasticMq extends Controlled {
  endpoint: string;
}

async function startElasticMq(persist: boolean): Promise<DedicatedElasticMq> {
  const { ports, controls } = await launch('elasticmq.sh', ['--port'], persist ? ['--persist'] : []);
  return { endpoint: `http://127.0.0.1:${ports[0]}`, ...controls };
}

/** A private ElasticMQ on a free port in a temp dir; its queues and messages survive stop/start. */
export function startDedicatedElasticMq(): Promise<DedicatedElasticMq> {
  return startElasticMq(true);
}

// ---- the shared broker of this process ----

type Resolved<T> = { value: T } | { reason: string };

async function shared<T>(
  variable: string,
  parse: (raw: string) => T,
  problem: (value: T) => Promise<string | null>,
  start: () => Promise<T>,
  label: string,
): Promise<Resolved<T>> {
  const raw = process.env[variable];
  let envReason = '';
  if (raw) {
    const value = parse(raw);
    const why = await problem(value);
    if (!why) return { value };
    envReason = `${variable}=${raw} does not answer (${why}); `;
  }
  if (process.env.PALAI_TEST_START_BROKERS === '0') {
    return { reason: `${envReason}no ${label} and PALAI_TEST_START_BROKERS=0` };
  }
  try {
    return { value: await start() };
  } catch (error) {
    return { reason: `${envReason}starting ${label} failed: ${(error as Error).message}` };
  }
}

let kafkaResolved: Promise<Resolved<string[]>> | null = null;
let sqsResolved: Promise<Resolved<string>> | null = null;

function resolve(kind: BrokerKind): Promise<Resolved<string[] | string>> {
  if (kind === 'kafka') {
    kafkaResolved ??= shared(
      'PALAI_TEST_KAFKA_BROKERS',
      (raw) =>
        raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      kafkaProblem,
      async () => (await startDedicatedKafka()).brokers,
      'Kafka',
    );
    return kafkaResolved;
  }
  sqsResolved ??= shared(
    'PALAI_TEST_SQS_ENDPOINT',
    (raw) => raw.replace(/\/+$/, ''),
    sqsProblem,
    // In memory: nothing restarts the shared one.
    async () => (await startElasticMq(false)).endpoint,
    'ElasticMQ',
  );
  return sqsResolved;
}

/** Null when the broker is available; otherwise why not (fatal under PALAI_REQUIRE_SERVICES=1). */
export async function brokerUnavailable(kind: BrokerKind): Promise<string | null> {
  const resolved = await resolve(kind);
  if ('value' in resolved) return null;
  if (requireServices) throw new Error(`${resolved.reason} (PALAI_REQUIRE_SERVICES=1)`);
  return resolved.reason;
}

/** The shared Kafka's bootstrap brokers, or null when unavailable (see brokerUnavailable). */
export async function kafkaBrokers(): Promise<string[] | null> {
  if (await brokerUnavailable('kafka')) return null;
  return ((await resolve('kafka')) as { value: string[] }).value;
}

/** The shared ElasticMQ's endpoint URL, or null when unavailable (see brokerUnavailable). */
export async function sqsEndpoint(): Promise<string | null> {
  if (await brokerUnavailable('sqs')) return null;
  return ((await resolve('sqs')) as { value: string }).value;
}
