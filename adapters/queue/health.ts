// One consumer's health as this process sees it, for the API and the log: a
// runner says `running()` when it reaches its source and `failing(error)` when
// connecting or receiving failed. Only a change is written to the store and
// logged (a warning when failing starts, an info on recovery); a retry that
// fails the same way is a debug line. The error text is the error's name and
// message with the consumer's secrets taken out: never a stack, never a key.
import { storableText } from '../../core/api/index.js';
import type { QueueSurfaceApi } from '../../core/surfaces/queue/queue-api.js';
import type { Logger } from '../../core/logger.js';
import type { QueueConsumerConfig, QueueHealthReport } from '../../core/surfaces/queue/queue-port.js';

/** The consumer's secret values, which no error text may carry. */
function secretsOf(config: QueueConsumerConfig): string[] {
  const values = config.kind === 'sqs' ? [config.credentials?.secret_access_key, config.credentials?.session_token] : [config.sasl?.password];
  return values.filter((v): v is string => typeof v === 'string' && v.length > 0);
}

function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // Node's connection attempts to several addresses fail as one AggregateError with no message of its own.
  const inner = error instanceof AggregateError ? error.errors.map(messageOf).join('; ') : '';
  return error.message || inner || String((error as { code?: unknown }).code ?? 'no message');
}

/** What the consumer reads, for a sentence: its queue URL or topic. */
export function sourceName(config: QueueConsumerConfig): string {
  return config.kind === 'sqs' ? config.sqs.queue_url : `topic ${config.kafka.topic}`;
}

/** `Name: message` of an error, with every secret of the consumer replaced. */
export function describeError(error: unknown, config: QueueConsumerConfig): string {
  const name = error instanceof Error ? error.name : 'Error';
  let text = `${name}: ${messageOf(error)}`;
  for (const secret of secretsOf(config)) text = text.split(secret).join('[redacted]');
  // A broker's text may hold what no store keeps (U+0000, half a surrogate pair): made storable, so the report is not refused.
  return storableText(text);
}

export class ConsumerHealth {
  /** What this process last found, for the log. */
  private seen: QueueHealthReport | null = null;
  /** What this process last wrote; a failed write is tried again on the next report. */
  private written: string | null = null;
  /** Writes one after another, so the store ends with the latest report. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly api: QueueSurfaceApi,
    private readonly config: QueueConsumerConfig,
    private readonly logger: Logger,
  ) {}

  /** The runner reaches its source. */
  running(): Promise<void> {
    if (this.seen?.state === 'failing') this.logger.info('the queue consumer reaches its source again');
    this.seen = { state: 'running' };
    return this.write(this.seen);
  }

  /** `what` (e.g. "receiving from <queue url>") failed with `error`; it is tried again after `retryInMs`. */
  failing(what: string, error: unknown, retryInMs: number): Promise<void> {
    const report: QueueHealthReport = { state: 'failing', error: `${what} failed: ${describeError(error, this.config)}` };
    const fields = { error: report.error, retry_in_ms: retryInMs };
    if (this.seen?.state !== 'failing') this.logger.warn(fields, 'the queue consumer cannot reach its source; it is tried again until it can');
    else this.logger.debug(fields, 'the queue consumer still cannot reach its source');
    this.seen = report;
    return this.write(report);
  }

  private write(report: QueueHealthReport): Promise<void> {
    this.writing = this.writing.then(() => this.writeNow(report));
    return this.writing;
  }

  private async writeNow(report: QueueHealthReport): Promise<void> {
    const key = JSON.stringify(report);
    if (key === this.written) return;
    try {
      await this.api.queues.reportHealth(this.config, report);
      this.written = key;
    } catch (error) {
      this.logger.debug({ error: describeError(error, this.config) }, "recording the queue consumer's health failed; the next report tries again");
    }
  }
}
