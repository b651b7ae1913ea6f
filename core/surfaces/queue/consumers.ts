// Queue consumers: a project's SQS queues and Kafka topics whose messages are
// agent jobs (docs/queues.md). The kernel keeps what each consumer reads, where
// its results and invalid jobs go, and its credentials by reference in the
// secret store; the queue surface (adapters/queue) runs them. A change NOTIFYs
// the processes running consumers, so a pause or a deletion takes effect at once.
import type {
  CreateQueueConsumerRequest,
  KafkaSasl,
  KafkaSource,
  QueueConsumer,
  QueueDestination,
  SqsCredentials,
  SqsSource,
  UpdateQueueConsumerRequest,
} from '../../../generated/schemas.js';
import { requireAgent } from '../../agents/agents.js';
import { PalaiError } from '../../errors/palai-error.js';
import { newId } from '../../ids.js';
import { recordAnswer, reserveKey, type IdempotencyClaim } from '../../idempotency/idempotency.js';
import { unixSeconds } from '../../json.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../../pagination.js';
import { resourceLookup } from '../../resources/find-by-ref.js';
import type { SecretStore } from '../../secrets/secret-port.js';
import { needsSecretKey, removeSealed, revealValues, sealValues, type Sealing } from '../../secrets/sealed-fields.js';
import { isUniqueViolation, type Db, type Queryable } from '../../store/db.js';
import { HEALTH_COLUMNS, HEALTH_JOIN, healthView, type HealthColumns } from './health.js';
import { QUEUE_CONSUMERS_CHANNEL, type QueueConsumerConfig } from './queue-port.js';

const CREDENTIALS: Sealing = { purpose: 'queue-consumer-credentials', noSecretKey: () => needsSecretKey('Storing credentials', '/credentials') };

interface QueueConsumerRow extends HealthColumns {
  id: string;
  project_id: string;
  name: string;
  kind: 'sqs' | 'kafka';
  source: SqsSource | KafkaSource;
  reply: QueueDestination | null;
  dead_letter: QueueDestination | null;
  agent: string | null;
  max_in_flight: number;
  paused: boolean;
  credentials_kind: 'sqs' | 'sasl' | null;
  credentials_secret_id: string | null;
  credentials_last4: string | null;
  created_at: Date;
  updated_at: Date;
}

export function queueConsumerView(row: QueueConsumerRow): QueueConsumer {
  return {
    id: row.id,
    object: 'queue_consumer',
    name: row.name,
    kind: row.kind,
    ...(row.kind === 'sqs' ? { sqs: row.source as SqsSource } : { kafka: row.source as KafkaSource }),
    agent: row.agent,
    reply: row.reply,
    dead_letter: row.dead_letter,
    max_in_flight: row.max_in_flight,
    paused: row.paused,
    credentials: row.credentials_kind ? { kind: row.credentials_kind, last4: row.credentials_last4 } : null,
    health: healthView(row),
    created_at: unixSeconds(row.created_at)!,
    updated_at: unixSeconds(row.updated_at)!,
  };
}

const invalid = (pointer: string, detail: string) =>
  new PalaiError('validation-failed', `Queue consumer ${pointer.slice(1)} ${detail}.`, { errors: [{ pointer, detail }] });

/** What a consumer reads, where it sends, and its credentials: as created, or after a change. */
type ConsumerShape = Pick<CreateQueueConsumerRequest, 'kind' | 'sqs' | 'kafka' | 'credentials'> & {
  reply?: QueueDestination | null;
  dead_letter?: QueueDestination | null;
};

/** What the schema cannot say: the source must match the kind, and destinations the broker. */
function checkShape(request: ConsumerShape): void {
  const source = request.kind === 'sqs' ? request.sqs : request.kafka;
  const other = request.kind === 'sqs' ? 'kafka' : 'sqs';
  if (!source) throw invalid(`/${request.kind}`, `is required for a ${request.kind} consumer`);
  if (request[other]) throw invalid(`/${other}`, `has no place in a ${request.kind} consumer`);
  const field = request.kind === 'sqs' ? 'queue_url' : 'topic';
  for (const key of ['reply', 'dead_letter'] as const) {
    const destination = request[key];
    if (destination && !(field in destination)) throw invalid(`/${key}`, `must name a ${field} for a ${request.kind} consumer`);
  }
  if (request.kind === 'kafka' && !request.dead_letter)
    throw invalid('/dead_letter', 'is required for a kafka consumer (invalid jobs must go somewhere without blocking the partition)');
  const credentials = request.credentials;
  if (credentials && (request.kind === 'sqs') !== 'access_key_id' in credentials) {
    throw invalid('/credentials', request.kind === 'sqs' ? 'must be SQS access keys' : 'must be Kafka SASL credentials');
  }
}

/** The consumer named by id (`qc_…`) or name, with its health. */
const { find: findConsumer, require: requireConsumer } = resourceLookup<QueueConsumerRow>(
  { table: 'c', idPrefix: 'qc_', select: `SELECT c.*, ${HEALTH_COLUMNS} FROM queue_consumers c ${HEALTH_JOIN}` },
  (ref) => new PalaiError('not-found', `No queue consumer with id or name ${JSON.stringify(ref)} in this project.`),
);

const changed = (tx: Queryable, id: string) => tx.query('SELECT pg_notify($1, $2)', [QUEUE_CONSUMERS_CHANNEL, id]);

const conflict = (name: string) => new PalaiError('conflict', `A queue consumer named ${JSON.stringify(name)} already exists.`);

export async function createQueueConsumer(
  db: Db,
  secrets: SecretStore,
  projectId: string,
  request: CreateQueueConsumerRequest,
  idem?: IdempotencyClaim,
): Promise<QueueConsumer> {
  checkShape(request);
  if (await findConsumer(db, projectId, request.name)) throw conflict(request.name);
  const id = newId('qc');
  try {
    return await db.transaction(async (tx) => {
      await reserveKey(tx, projectId, idem, id);
      if (request.agent !== undefined) await requireAgent(tx, projectId, request.agent);
      const stored = request.credentials ? await storeCredentials(tx, secrets, projectId, request.credentials) : null;
      const { rows } = await tx.query<QueueConsumerRow>(
        `INSERT INTO queue_consumers (id, project_id, name, kind, source, reply, dead_letter, agent, max_in_flight, paused,
           credentials_kind, credentials_secret_id, credentials_last4)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING *`,
        [
          id,
          projectId,
          request.name,
          request.kind,
          JSON.stringify(request.kind === 'sqs' ? request.sqs : request.kafka),
          request.reply ? JSON.stringify(request.reply) : null,
          request.dead_letter ? JSON.stringify(request.dead_letter) : null,
          request.agent ?? null,
          request.max_in_flight ?? 16,
          request.paused ?? false,
          stored?.kind ?? null,
          stored?.secretId ?? null,
          stored?.last4 ?? null,
        ],
      );
      const view = queueConsumerView(rows[0]);
      await recordAnswer(tx, projectId, idem, 201, view, id);
      await changed(tx, id);
      return view;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(request.name);
    throw error;
  }
}

async function storeCredentials(tx: Queryable, secrets: SecretStore, projectId: string, credentials: SqsCredentials | KafkaSasl) {
  const kind = 'access_key_id' in credentials ? ('sqs' as const) : ('sasl' as const);
  const { credentials: ref } = await sealValues(tx, secrets, projectId, CREDENTIALS, { credentials: JSON.stringify(credentials) });
  // The last four of the key id (SQS) or user name (SASL), never of the secret half.
  const shown = kind === 'sqs' ? (credentials as SqsCredentials).access_key_id : (credentials as KafkaSasl).username;
  return { kind, secretId: ref.id, last4: shown.length >= 8 ? shown.slice(-4) : null };
}

export async function listQueueConsumers(db: Db, projectId: string, page: PageRequest): Promise<Page<QueueConsumer>> {
  const { rows } = await db.query<QueueConsumerRow>(
    `SELECT c.*, ${HEALTH_COLUMNS} FROM queue_consumers c ${HEALTH_JOIN} WHERE c.project_id = $1 AND ($2::text IS NULL OR c.id > $2) ORDER BY c.id LIMIT $3`,
    [projectId, page.after ?? null, fetchSize(page)],
  );
  return toPage(rows, page, queueConsumerView);
}

export async function getQueueConsumer(db: Db, projectId: string, ref: string): Promise<QueueConsumer> {
  return queueConsumerView(await requireConsumer(db, projectId, ref));
}

/**
 * Applies a change; a new source, destinations or credentials are checked as
 * at creation. Replaced credentials are deleted from the secret store in the
 * same transaction. Every process running the consumer restarts it (NOTIFY).
 */
export async function updateQueueConsumer(
  db: Db,
  secrets: SecretStore,
  projectId: string,
  ref: string,
  request: UpdateQueueConsumerRequest,
): Promise<QueueConsumer> {
  return db.transaction(async (tx) => {
    const row = await requireConsumer(tx, projectId, ref, true);
    if (request.agent != null) await requireAgent(tx, projectId, request.agent);
    const after: ConsumerShape = {
      kind: row.kind,
      sqs: row.kind === 'sqs' ? (request.sqs ?? (row.source as SqsSource)) : request.sqs,
      kafka: row.kind === 'kafka' ? (request.kafka ?? (row.source as KafkaSource)) : request.kafka,
      credentials: request.credentials ?? undefined,
      reply: request.reply === undefined ? row.reply : request.reply,
      dead_letter: request.dead_letter === undefined ? row.dead_letter : request.dead_letter,
    };
    checkShape(after);
    let stored = { kind: row.credentials_kind, secretId: row.credentials_secret_id, last4: row.credentials_last4 };
    if (request.credentials !== undefined) {
      await removeSealed(tx, secrets, projectId, [row.credentials_secret_id]);
      stored = request.credentials ? await storeCredentials(tx, secrets, projectId, request.credentials) : { kind: null, secretId: null, last4: null };
    }
    const { rows } = await tx.query<QueueConsumerRow>(
      `UPDATE queue_consumers SET paused = coalesce($2, paused), max_in_flight = coalesce($3, max_in_flight),
         agent = CASE WHEN $4 THEN $5 ELSE agent END, source = $6, reply = $7, dead_letter = $8,
         credentials_kind = $9, credentials_secret_id = $10, credentials_last4 = $11, updated_at = now()
       WHERE id = $1 RETURNING *`,
      [
        row.id,
        request.paused ?? null,
        request.max_in_flight ?? null,
        request.agent !== undefined,
        request.agent ?? null,
        JSON.stringify(row.kind === 'sqs' ? after.sqs : after.kafka),
        after.reply ? JSON.stringify(after.reply) : null,
        after.dead_letter ? JSON.stringify(after.dead_letter) : null,
        stored.kind,
        stored.secretId,
        stored.last4,
      ],
    );
    await changed(tx, row.id);
    return queueConsumerView(rows[0]);
  });
}

/** Deletes the consumer and its stored credentials; processes running it stop within seconds. */
export async function deleteQueueConsumer(db: Db, secrets: SecretStore, projectId: string, ref: string): Promise<string> {
  return db.transaction(async (tx) => {
    const row = await requireConsumer(tx, projectId, ref, true);
    await tx.query('DELETE FROM queue_consumers WHERE id = $1', [row.id]);
    await removeSealed(tx, secrets, projectId, [row.credentials_secret_id]);
    await changed(tx, row.id);
    return row.id;
  });
}

/** Every consumer of every project that should be running (not paused), with its credentials revealed, for the processes that run them. */
export async function runnableQueueConsumers(db: Db, secrets: SecretStore): Promise<QueueConsumerConfig[]> {
  const { rows } = await db.query<QueueConsumerRow>('SELECT * FROM queue_consumers WHERE NOT paused ORDER BY id');
  const out: QueueConsumerConfig[] = [];
  for (const row of rows) out.push(await consumerConfig(db, secrets, row));
  return out;
}

/** One consumer with its credentials revealed (to send a result), or null when it is gone. */
export async function queueConsumerConfig(db: Db, secrets: SecretStore, projectId: string, id: string): Promise<QueueConsumerConfig | null> {
  const row = await findConsumer(db, projectId, id);
  return row && consumerConfig(db, secrets, row);
}

async function consumerConfig(db: Db, secrets: SecretStore, row: QueueConsumerRow): Promise<QueueConsumerConfig> {
  const sealed = await revealValues(db, secrets, row.project_id, { credentials: row.credentials_secret_id });
  const credentials = sealed.credentials === null ? null : (JSON.parse(sealed.credentials) as SqsCredentials | KafkaSasl);
  const base = {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    agent: row.agent,
    reply: row.reply,
    deadLetter: row.dead_letter,
    maxInFlight: row.max_in_flight,
    updatedAt: row.updated_at,
  };
  return row.kind === 'sqs'
    ? { ...base, kind: 'sqs', sqs: row.source as SqsSource, credentials: credentials as SqsCredentials | null }
    : { ...base, kind: 'kafka', kafka: row.source as KafkaSource, sasl: credentials as KafkaSasl | null };
}
