// What happens to one Kafka record before its offset may be committed: it is
// admitted (or found admitted before), or passed on — to the dead-letter topic
// when it can never be a job, to the retry topic when admitting it failed for
// a passing reason. Palai's own outage (the store is down or busy, the process
// not ready) is neither: the same record is tried again until it goes through
// or the runner stops, and nothing is committed meanwhile.
import type { KafkaMessage, Message, Producer } from 'kafkajs';
import type { QueueSurfaceApi } from '../../../core/surfaces/queue/queue-api.js';
import type { Logger } from '../../../core/logger.js';
import type { AdmissionOutcome } from '../../../core/surfaces/queue/queue-port.js';
import { isOutage, retryOf } from '../../../core/errors/palai-error.js';
import { DEFAULT_MAX_ATTEMPTS, failedReason } from '../failed-admission.js';
import type { consumerMetrics } from '../runner.js';
import type { KafkaConsumerConfig } from './client.js';
import { Backoff } from './timing.js';
import { attemptsOf, messageIdOf, originOf, passedOnHeaders, type RecordOrigin } from './record-headers.js';

export interface RecordContext {
  api: QueueSurfaceApi;
  config: KafkaConsumerConfig;
  logger: Logger;
  metrics: ReturnType<typeof consumerMetrics>;
  /** The runner's producer, connected on first use. */
  producer(): Promise<Producer>;
  /** Aborted when the runner stops: no new attempt starts after that. */
  stopping: AbortSignal;
  /** Keeps the group membership alive while a record waits; throws when the group rebalances. */
  heartbeat(): Promise<void>;
  /** A new response was admitted: backpressure counts it before its next reading of the backlog. */
  noteAdmitted(): void;
}

/**
 * `done`: the offset after the record may be committed. `later`: the runner
 * stopped or the group is rebalancing before the record got anywhere; it is
 * not committed and comes again (here or to the partition's next owner).
 */
export type RecordOutcome = 'done' | 'later';

type Attempted<T> = { ok: T } | { failed: unknown } | 'later';

/** Waits `ms` unless the runner stops first; false when it stopped. */
function pause(ms: number, stopping: AbortSignal): Promise<boolean> {
  if (stopping.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stopping.removeEventListener('abort', done);
      resolve(!stopping.aborted);
    };
    const timer = setTimeout(done, ms);
    stopping.addEventListener('abort', done, { once: true });
  });
}

/**
 * Calls `attempt` until it succeeds or fails for good, backing off while
 * `passing` says a failure will pass. `later` when the runner stops or the
 * group rebalances meanwhile (the heartbeat says so).
 */
async function untilItWorks<T>(ctx: RecordContext, what: string, attempt: () => Promise<T>, passing: (error: unknown) => boolean): Promise<Attempted<T>> {
  const backoff = new Backoff(200, 5000);
  for (;;) {
    if (ctx.stopping.aborted) return 'later';
    try {
      return { ok: await attempt() };
    } catch (error) {
      if (!passing(error)) return { failed: error };
      const delay = backoff.next();
      ctx.logger.warn({ err: error, retryInMs: delay }, `${what} failed; the same record is tried again`);
      if (!(await pause(delay, ctx.stopping))) return 'later';
    }
    try {
      await ctx.heartbeat();
    } catch {
      return 'later';
    }
  }
}

/** Produces `message` to `topic`, retrying until the broker takes it. */
async function passOn(ctx: RecordContext, topic: string, message: Message): Promise<RecordOutcome> {
  const sent = await untilItWorks(
    ctx,
    `producing a record to ${topic}`,
    async () => (await ctx.producer()).send({ topic, messages: [message] }),
    () => true,
  );
  return sent === 'later' ? 'later' : 'done';
}

async function deadLetter(ctx: RecordContext, message: KafkaMessage, origin: RecordOrigin, reason: string): Promise<RecordOutcome> {
  const topic = ctx.config.deadLetter?.topic;
  if (!topic) throw new Error('this Kafka consumer has no dead-letter topic');
  if ((await passOn(ctx, topic, { key: message.key, value: message.value, headers: passedOnHeaders(message, origin, reason) })) === 'later') return 'later';
  ctx.metrics.count('dead_lettered');
  ctx.logger.info({ origin: messageIdOf(origin), reason }, 'a queue record was dead-lettered');
  return 'done';
}

/** Admission failed, not for our own outage: try again later through the retry topic, or give up after max_attempts. */
async function failed(ctx: RecordContext, message: KafkaMessage, origin: RecordOrigin, error: unknown): Promise<RecordOutcome> {
  ctx.metrics.count('failed');
  // Refused as it is (the kernel's boundary found text no store can hold in it): no retry can help.
  if (retryOf(error) !== 'later') return deadLetter(ctx, message, origin, (error as Error).message);
  const attempts = attemptsOf(message) + 1;
  const maxAttempts = ctx.config.kafka.max_attempts ?? DEFAULT_MAX_ATTEMPTS;
  if (attempts >= maxAttempts) return deadLetter(ctx, message, origin, failedReason(error, attempts));
  ctx.logger.warn({ err: error, origin: messageIdOf(origin), attempts }, 'admitting a queue record failed; it goes to the retry topic');
  const topic = ctx.config.kafka.retry_topic ?? ctx.config.kafka.topic;
  return passOn(ctx, topic, { key: message.key, value: message.value, headers: passedOnHeaders(message, origin, failedReason(error), attempts) });
}

/** Takes one record as far as it can go before its offset is committed. */
export async function takeRecord(ctx: RecordContext, here: RecordOrigin, message: KafkaMessage): Promise<RecordOutcome> {
  ctx.metrics.count('received');
  const origin = originOf(here, message);
  if (message.value === null) return deadLetter(ctx, message, origin, 'the record has no value (a tombstone), so it carries no job');
  const body = message.value.toString('utf8');
  const attempted = await untilItWorks(
    ctx,
    'admitting a queue record',
    () => ctx.api.queues.admit(ctx.config, { body, messageId: messageIdOf(origin) }),
    isOutage,
  );
  if (attempted === 'later') return 'later';
  if ('failed' in attempted) return failed(ctx, message, origin, attempted.failed);
  const outcome: AdmissionOutcome = attempted.ok;
  switch (outcome.kind) {
    case 'admitted':
      ctx.metrics.count('admitted');
      ctx.noteAdmitted();
      return 'done';
    case 'duplicate':
      ctx.metrics.count('duplicate');
      return 'done';
    case 'invalid':
      return deadLetter(ctx, message, origin, outcome.reason);
    default: {
      const unknown: never = outcome;
      throw new Error(`unknown admission outcome ${JSON.stringify(unknown)}`);
    }
  }
}
