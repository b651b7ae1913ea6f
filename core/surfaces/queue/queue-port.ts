// The queue port: what the queue surface (adapters/queue) needs from the kernel
// to take agent jobs from SQS and Kafka exactly once and send results back.
//
// Glossary
//   consumer     a project's SQS queue or Kafka topic whose messages are jobs
//   job          one message: a QueueJob (protocols/queue.schema.json)
//   identity     what dedupes a job: its idempotency_key, else the broker's own
//                identity of the message (SQS message id; Kafka topic/partition/offset)
//   admission    the job's response committed in PostgreSQL, with its job record
//                and its result subscription, in one transaction; only then is
//                the message deleted (SQS) or its offset committed (Kafka)
//   result       a QueueResult sent through the outbox (consumer `queue_reply`,
//                target = the consumer id) when the response ends or waits
//   health       whether the processes running a consumer reach its source,
//                reported by them on a change and shown on the consumer
import type { KafkaSasl, KafkaSource, QueueDestination, SqsCredentials, SqsSource } from '../../../generated/schemas.js';
import { declareInboxSource } from '../../idempotency/inbox-sources.js';
import { declareSessionKeySource } from '../../sessions/session-keys.js';

/** Jobs in the inbox, keyed by their identity; and the sessions their `session_key`s name. */
export const QUEUE_INBOX_SOURCE = declareInboxSource('queue', 'idempotency_key');
export const QUEUE_SESSION_KEYS = declareSessionKeySource('queue');

/** NOTIFYed when a consumer is created, changed or deleted; the payload is its id. */
export const QUEUE_CONSUMERS_CHANNEL = 'palai_queue_consumers';

/** The outbox consumer that sends job results. */
export const QUEUE_REPLY_CONSUMER = 'queue_reply';

/** The SQS message attribute / Kafka header naming why a job was dead-lettered. */
export const ERROR_REASON_ATTRIBUTE = 'palai-error-reason';

/** How long a job's identity is remembered: SQS keeps a message at most 14 days. */
export const JOB_DEDUPE_HOURS = 14 * 24;

interface ConsumerBase {
  id: string;
  projectId: string;
  name: string;
  /** The agent every job runs, or null: each job names its own. */
  agent: string | null;
  reply: QueueDestination | null;
  deadLetter: QueueDestination | null;
  maxInFlight: number;
  /** Changes when the consumer is updated: a runner restarts on a new value. */
  updatedAt: Date;
}

/** A consumer as the process running it needs it: its credentials revealed. Never shown to API callers. */
export type QueueConsumerConfig =
  | (ConsumerBase & { kind: 'sqs'; sqs: SqsSource; credentials: SqsCredentials | null })
  | (ConsumerBase & { kind: 'kafka'; kafka: KafkaSource; sasl: KafkaSasl | null });

/** One message as the broker gave it. */
export interface QueueMessage {
  /** The message body, as text. */
  body: string;
  /** The broker's identity of this message: the same on every redelivery of it. */
  messageId: string;
}

/**
 * What admission made of a message. `admitted`: a new response; `duplicate`:
 * the job was admitted before (a redelivery, or the same idempotency key);
 * `invalid`: the message can never become a job (dead-letter it with `reason`).
 * Either of the first two means the message may be acknowledged.
 */
export type AdmissionOutcome = { kind: 'admitted'; responseId: string } | { kind: 'duplicate'; responseId: string } | { kind: 'invalid'; reason: string };

/**
 * What a process running a consumer found, reported when it changes:
 * `running` (it reaches the source) or `failing` (connecting or receiving
 * failed; `error` is the error's name and message, with no credentials).
 */
export type QueueHealthReport = { state: 'running' } | { state: 'failing'; error: string };
