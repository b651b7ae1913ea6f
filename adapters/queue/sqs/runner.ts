// One SQS consumer: long-polls its queue, admits each message through the
// kernel, and deletes (in batches) only what was admitted or dead-lettered.
// While admission is slow the messages' visibility is extended, so no other
// receiver takes them meanwhile. During Palai's own outage a message is held
// and tried again in place, so the outage adds nothing to its receive count;
// a message whose admission failed otherwise is left to come back, and once
// SQS has handed it out max_attempts times (ApproximateReceiveCount) it is
// dead-lettered with the reason. In a FIFO queue the messages of one group are
// admitted one after another, and a failure stops the rest of its group in that
// batch, so order per group holds (SQS itself hands out no more of a group
// while some are out); a dead-lettered message lets its group go on.
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ERROR_REASON_ATTRIBUTE, type AdmissionOutcome, type QueueConsumerConfig } from '../../../core/surfaces/queue/queue-port.js';
import { isOutage, retryOf } from '../../../core/errors/palai-error.js';
import { DEFAULT_MAX_ATTEMPTS, failedReason } from '../failed-admission.js';
import { describeError } from '../health.js';
import { consumerMetrics, type QueueRunner, type RunnerDeps, type RunnerFactory } from '../runner.js';
import { sqsClient } from './client.js';

type SqsConfig = Extract<QueueConsumerConfig, { kind: 'sqs' }>;

/** SQS takes at most ten entries per batch call. */
const BATCH = 10;
/** How often the source queue's depth is read for /metrics. */
const DEPTH_INTERVAL_MS = 15_000;
const MAX_RECEIVE_BACKOFF_MS = 30_000;
/** The longest wait between two tries of one message while Palai itself cannot admit. */
const MAX_OUTAGE_BACKOFF_MS = 5000;

type Verdict = 'ack' | 'retry';

/** Why a message goes to the dead-letter queue: it can never be a job, or admitting it failed max_attempts times. */
type DeadLetterCause = 'invalid' | 'exhausted';

const chunks = <T>(items: T[], size: number): T[][] => Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, i * size + size));

export const sqsRunner: RunnerFactory = (config, deps) => new SqsRunner(config as SqsConfig, deps);

class SqsRunner implements QueueRunner {
  private readonly client: SQSClient;
  private readonly stopping = new AbortController();
  private readonly metrics;
  private readonly fifo: boolean;
  private readonly batches = new Set<Promise<void>>();
  private inFlight = 0;
  private loop: Promise<void> | null = null;
  private depthTimer: NodeJS.Timeout | null = null;
  /** Resolved when a batch finishes, so a full runner can receive again. */
  private slotFreed: (() => void) | null = null;

  constructor(
    private readonly config: SqsConfig,
    private readonly deps: RunnerDeps,
  ) {
    this.client = sqsClient(deps.api, config, (this.source.wait_seconds ?? 20) * 1000 + 10_000);
    this.metrics = consumerMetrics(deps.api, config);
    this.fifo = config.sqs.queue_url.endsWith('.fifo');
  }

  private get source() {
    return this.config.sqs;
  }

  async start(): Promise<void> {
    // Reading the queue's attributes proves the queue exists and the credentials work before the loop starts.
    await this.readDepth();
    this.depthTimer = setInterval(() => this.readDepth().catch(() => undefined), DEPTH_INTERVAL_MS).unref();
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    if (this.depthTimer) clearInterval(this.depthTimer);
    this.slotFreed?.();
    await this.loop;
    await Promise.allSettled([...this.batches]);
    this.metrics.forget();
    this.client.destroy();
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  private async readDepth(): Promise<void> {
    const out = await this.client.send(new GetQueueAttributesCommand({ QueueUrl: this.source.queue_url, AttributeNames: ['ApproximateNumberOfMessages'] }));
    this.metrics.depth(Number(out.Attributes?.ApproximateNumberOfMessages ?? 0));
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      await this.deps.backpressure.released(this.stopping.signal);
      const room = this.config.maxInFlight - this.inFlight;
      if (this.stopped) break;
      if (room <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        continue;
      }
      let messages: Message[];
      try {
        const out = await this.client.send(
          new ReceiveMessageCommand({
            QueueUrl: this.source.queue_url,
            MaxNumberOfMessages: Math.min(BATCH, room),
            WaitTimeSeconds: this.source.wait_seconds ?? 20,
            VisibilityTimeout: this.visibility,
            MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: this.stopping.signal },
        );
        messages = out.Messages ?? [];
        failures = 0;
        void this.deps.health.running();
      } catch (error) {
        if (this.stopped) break;
        failures++;
        const delay = Math.min(MAX_RECEIVE_BACKOFF_MS, 250 * 2 ** failures);
        void this.deps.health.failing(`receiving from ${this.source.queue_url}`, error, delay);
        await sleep(delay, undefined, { signal: this.stopping.signal }).catch(() => undefined);
        continue;
      }
      if (messages.length > 0) this.track(messages);
    }
  }

  private get visibility(): number {
    return this.source.visibility_seconds ?? 30;
  }

  private track(messages: Message[]): void {
    this.inFlight += messages.length;
    this.metrics.inFlight(this.inFlight);
    const batch = this.handle(messages).finally(() => {
      this.inFlight -= messages.length;
      this.metrics.inFlight(this.inFlight);
      this.batches.delete(batch);
      this.slotFreed?.();
      this.slotFreed = null;
    });
    this.batches.add(batch);
  }

  /** Admits a received batch, then deletes what may go; what failed comes back after a short wait. */
  private async handle(messages: Message[]): Promise<void> {
    const pending = new Set(messages);
    const extender = setInterval(() => this.extend([...pending]), (this.visibility * 1000) / 2).unref();
    const acked: Message[] = [];
    const retried: Message[] = [];
    try {
      await Promise.all(
        this.groups(messages).map(async (group) => {
          for (const [index, message] of group.entries()) {
            const verdict = await this.admit(message);
            pending.delete(message);
            if (verdict === 'ack') {
              acked.push(message);
              continue;
            }
            retried.push(message);
            // In a FIFO group, what follows a failed message must wait for it.
            if (this.fifo) {
              for (const rest of group.slice(index + 1)) (pending.delete(rest), retried.push(rest));
              return;
            }
          }
        }),
      );
    } finally {
      clearInterval(extender);
    }
    await this.delete(acked);
    if (retried.length > 0) await this.changeVisibility(retried, Math.min(this.visibility, 5));
  }

  /** FIFO: one list per message group, in order; otherwise each message alone. */
  private groups(messages: Message[]): Message[][] {
    if (!this.fifo) return messages.map((m) => [m]);
    const groups = new Map<string, Message[]>();
    for (const m of messages) {
      const key = m.Attributes?.MessageGroupId ?? '';
      groups.set(key, [...(groups.get(key) ?? []), m]);
    }
    return [...groups.values()];
  }

  private async admit(message: Message): Promise<Verdict> {
    this.metrics.count('received');
    const outcome = await this.admitThroughOutages(message);
    if (outcome === 'stopped') return 'retry';
    if ('failed' in outcome) return this.failed(message, outcome.failed);
    switch (outcome.kind) {
      case 'admitted':
      case 'duplicate':
        this.metrics.count(outcome.kind);
        if (outcome.kind === 'admitted') this.deps.backpressure.noteAdmitted();
        return 'ack';
      case 'invalid':
        return this.deadLetter(message, outcome.reason, 'invalid');
      default: {
        const unknown: never = outcome;
        throw new Error(`unknown admission outcome ${JSON.stringify(unknown)}`);
      }
    }
  }

  /** Admits the message, trying again in place while Palai itself cannot admit anything; 'stopped' when the runner stops first. */
  private async admitThroughOutages(message: Message): Promise<AdmissionOutcome | { failed: unknown } | 'stopped'> {
    for (let outages = 0; ; outages++) {
      try {
        return await this.deps.api.queues.admit(this.config, { body: message.Body ?? '', messageId: message.MessageId ?? '' });
      } catch (error) {
        if (!isOutage(error)) return { failed: error };
        this.metrics.count('failed');
        if (this.stopped) return 'stopped';
        const delay = Math.min(MAX_OUTAGE_BACKOFF_MS, 200 * 2 ** outages);
        const fields = { error: describeError(error, this.config), message_id: message.MessageId, retry_in_ms: delay };
        this.deps.logger[outages === 0 ? 'warn' : 'debug'](fields, 'Palai cannot admit an SQS message now; the same message is tried again');
        await sleep(delay, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      }
    }
  }

  /** Admission failed for a reason of the job's own: it comes back, or is dead-lettered once SQS has handed it out max_attempts times. */
  private failed(message: Message, error: unknown): Promise<Verdict> | Verdict {
    this.metrics.count('failed');
    // Refused as it is (the kernel's boundary found text no store can hold in it): no retry can help.
    if (retryOf(error) !== 'later') return this.deadLetter(message, (error as Error).message, 'invalid');
    const attempts = Number(message.Attributes?.ApproximateReceiveCount ?? 1);
    if (attempts >= this.maxAttempts) return this.deadLetter(message, failedReason(error, attempts), 'exhausted');
    this.deps.logger.warn({ err: error, message_id: message.MessageId, attempts }, 'admitting an SQS message failed; it comes back to be tried again');
    return 'retry';
  }

  private get maxAttempts(): number {
    return this.source.max_attempts ?? DEFAULT_MAX_ATTEMPTS;
  }

  /** Sends a message to the dead-letter queue with the reason; without one, it stays for the queue's own redrive policy. */
  private async deadLetter(message: Message, reason: string, cause: DeadLetterCause): Promise<Verdict> {
    const target = this.config.deadLetter?.queue_url;
    if (!target) {
      this.withoutDeadLetter(message, reason, cause);
      return 'retry';
    }
    try {
      await this.client.send(
        new SendMessageCommand({
          QueueUrl: target,
          MessageBody: message.Body || '(empty)',
          MessageAttributes: {
            ...Object.fromEntries(Object.entries(message.MessageAttributes ?? {}).slice(0, 7)),
            [ERROR_REASON_ATTRIBUTE]: { DataType: 'String', StringValue: reason.slice(0, 1000) },
            'palai-source-message-id': { DataType: 'String', StringValue: message.MessageId ?? '' },
          },
          ...(target.endsWith('.fifo')
            ? { MessageGroupId: message.Attributes?.MessageGroupId ?? 'palai-dead-letter', MessageDeduplicationId: message.MessageId }
            : {}),
        }),
      );
    } catch (error) {
      this.metrics.count('failed');
      this.deps.logger.warn({ err: error, message_id: message.MessageId }, 'dead-lettering an SQS message failed; it comes back to be tried again');
      return 'retry';
    }
    this.metrics.count('dead_lettered');
    this.deps.logger.info(
      { message_id: message.MessageId, reason },
      cause === 'invalid' ? 'an SQS message is not a valid job; dead-lettered' : 'admitting an SQS message failed max_attempts times; dead-lettered',
    );
    return 'ack';
  }

  /** Logs a message that should be dead-lettered and cannot be: once per message when its attempts ran out (every receive when it is invalid). */
  private withoutDeadLetter(message: Message, reason: string, cause: DeadLetterCause): void {
    const fields = { message_id: message.MessageId, reason };
    if (cause === 'invalid') {
      this.deps.logger.warn(fields, "an SQS message is not a valid job and the consumer has no dead_letter queue; the queue's redrive policy must take it");
    } else if (Number(message.Attributes?.ApproximateReceiveCount) === this.maxAttempts) {
      this.deps.logger.warn(
        fields,
        "admitting an SQS message failed max_attempts times and the consumer has no dead_letter queue; it stays in the queue, tried again on every receive, until the queue's redrive policy moves it",
      );
    } else {
      this.deps.logger.debug(fields, 'admitting an SQS message failed again; the consumer has no dead_letter queue');
    }
  }

  private async delete(messages: Message[]): Promise<void> {
    for (const chunk of chunks(messages, BATCH)) {
      try {
        const out = await this.client.send(
          new DeleteMessageBatchCommand({ QueueUrl: this.source.queue_url, Entries: chunk.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) }),
        );
        if (out.Failed?.length)
          this.deps.logger.warn({ failed: out.Failed.length }, 'SQS did not delete some admitted messages; they come back and are recognised as duplicates');
      } catch (error) {
        this.deps.logger.warn({ err: error }, 'deleting admitted SQS messages failed; they come back and are recognised as duplicates');
      }
    }
  }

  private extend(messages: Message[]): void {
    if (messages.length > 0) void this.changeVisibility(messages, this.visibility);
  }

  private async changeVisibility(messages: Message[], seconds: number): Promise<void> {
    for (const chunk of chunks(messages, BATCH)) {
      await this.client
        .send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: this.source.queue_url,
            Entries: chunk.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: seconds })),
          }),
        )
        .catch((error) => this.deps.logger.warn({ err: error }, 'changing SQS message visibility failed'));
    }
  }
}
