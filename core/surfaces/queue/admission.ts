// Admitting a queue message: it becomes a response exactly once. The response,
// its job record and the subscription that sends its result commit in one
// transaction, keyed in the inbox by the job's identity, so a redelivery or a
// duplicate finds the first response and runs nothing. A message that can never
// be a job is `invalid` (the surface dead-letters it); anything else that fails
// (the store is down) throws, and the surface leaves the message to come back.
import type { ErrorObject } from 'ajv';
import type { QueueJob } from '../../../generated/protocol-schemas.js';
import { PalaiError, retryOf } from '../../errors/palai-error.js';
import { inspectJson } from '../../json-guard.js';
import type { Inbox, InboxIdentity } from '../../idempotency/inbox-port.js';
import { subscribe } from '../../outbox/subscriptions.js';
import { admitWithin, type AdmissionCommand } from '../../responses/admission.js';
import { SETTLED_STATUSES, type ResponseStatus } from '../../response-status.js';
import type { Db } from '../../store/db.js';
import {
  JOB_DEDUPE_HOURS,
  QUEUE_INBOX_SOURCE,
  QUEUE_REPLY_CONSUMER,
  QUEUE_SESSION_KEYS,
  type AdmissionOutcome,
  type QueueConsumerConfig,
  type QueueMessage,
} from './queue-port.js';

/** The statuses a job's result is sent on: every end, and every wait for someone (never parked: it is still working). */
export const RESULT_STATUSES: ResponseStatus[] = [...SETTLED_STATUSES];

const MAX_BODY_CHARS = 2 * 1024 * 1024;

function schemaReason(errors: ErrorObject[] | null | undefined): string {
  const first = (errors ?? []).find((e) => e.keyword !== 'oneOf') ?? errors?.[0];
  if (!first) return 'the job does not match the QueueJob schema';
  const params = first.params as Record<string, string>;
  const where = first.instancePath || '/';
  if (first.keyword === 'required') return `the job's ${where === '/' ? '' : where + '/'}${params.missingProperty} is required`;
  if (first.keyword === 'additionalProperties') return `the job's ${params.additionalProperty} is not a known field`;
  return `the job's ${where} ${first.message ?? 'is invalid'}`;
}

/** The generated protocol validators, loaded with the first message (a process without queue consumers never needs them). */
let jobValidator: Promise<(typeof import('../../../generated/protocol-validators.js'))['QueueJob']> | null = null;
const loadJobValidator = () =>
  (jobValidator ??= import('../../../generated/protocol-validators.js')
    .then((m) => m.QueueJob)
    .catch((error: unknown) => {
      jobValidator = null;
      throw error;
    }));

/** The job in a message body, or why there is none. */
export async function parseJob(body: string): Promise<{ job: QueueJob } | { reason: string }> {
  const validQueueJob = await loadJobValidator();
  if (body.length > MAX_BODY_CHARS) return { reason: `the message body is larger than ${MAX_BODY_CHARS} characters` };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { reason: 'the message body is not JSON' };
  }
  // Before the schema check, which recurses: text the store cannot hold, or nesting too deep to walk, is no job.
  const unfit = inspectJson(value).errors[0];
  if (unfit) return { reason: `the job's ${unfit.pointer || 'body'} ${unfit.detail}` };
  if (!validQueueJob(value)) return { reason: schemaReason(validQueueJob.errors) };
  return { job: value as QueueJob };
}

/** What a job asks the kernel to admit: its agent (looked up once, by admission), its input, the session its key maps to. */
function jobCommand(job: QueueJob, agent: string): AdmissionCommand {
  return {
    agent,
    input: typeof job.input === 'string' ? [{ role: 'user', content: job.input }] : job.input,
    ...(job.session_key !== undefined ? { session: { kind: 'key', source: QUEUE_SESSION_KEYS, key: job.session_key } } : {}),
    ...(job.metadata !== undefined ? { metadata: job.metadata } : {}),
  };
}

export async function admitJob(db: Db, inbox: Inbox, consumer: QueueConsumerConfig, message: QueueMessage): Promise<AdmissionOutcome> {
  const parsed = await parseJob(message.body);
  if ('reason' in parsed) return { kind: 'invalid', reason: parsed.reason };
  const { job } = parsed;
  const agentRef = job.agent ?? consumer.agent;
  if (!agentRef) return { kind: 'invalid', reason: 'the job names no agent, and the consumer has none' };
  const replyTo = job.reply_to ?? (consumer.reply ? ((consumer.kind === 'sqs' ? consumer.reply.queue_url : consumer.reply.topic) ?? null) : null);
  const identity: InboxIdentity = {
    projectId: consumer.projectId,
    source: QUEUE_INBOX_SOURCE,
    key: job.idempotency_key !== undefined ? `job:${job.idempotency_key}` : `msg:${consumer.id}:${message.messageId}`.slice(0, 255),
    operation: 'queueJob',
    fingerprint: inbox.fingerprint('queueJob', {}, { agent: agentRef, input: job.input, session_key: job.session_key ?? null, metadata: job.metadata ?? null }),
    retentionHours: JOB_DEDUPE_HOURS,
  };
  try {
    return await inbox.once(
      identity,
      (claim) =>
        db.transaction(async (tx): Promise<AdmissionOutcome> => {
          const row = await admitWithin(tx, consumer.projectId, jobCommand(job, agentRef), claim);
          // The consumer names its agent by id or name; the admitted run knows both (a mismatch rolls the admission back).
          if (consumer.agent !== null && consumer.agent !== row.agent_id && consumer.agent !== row.agent_name) {
            throw new PalaiError('invalid-request', `The job names agent "${job.agent}", but this consumer runs "${consumer.agent}".`);
          }
          await tx.query(
            'INSERT INTO queue_jobs (response_id, project_id, consumer_id, idempotency_key, message_id, reply_to) VALUES ($1, $2, $3, $4, $5, $6)',
            [row.id, consumer.projectId, consumer.id, job.idempotency_key ?? null, message.messageId, replyTo],
          );
          if (replyTo !== null) {
            await subscribe(tx, {
              projectId: consumer.projectId,
              consumer: QUEUE_REPLY_CONSUMER,
              target: consumer.id,
              statuses: RESULT_STATUSES,
              responseId: row.id,
            });
          }
          return { kind: 'admitted', responseId: row.id };
        }),
      async (record) => ({ kind: 'duplicate', responseId: record.resourceId ?? '' }),
    );
  } catch (error) {
    // A job the same message can never make (its agent is gone, it contradicts its consumer) is dead-lettered.
    if (error instanceof PalaiError && retryOf(error) !== 'later') return { kind: 'invalid', reason: error.message };
    throw error;
  }
}
