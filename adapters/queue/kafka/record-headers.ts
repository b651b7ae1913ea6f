// The headers Palai reads and writes on Kafka records it passes on: why a
// record was dead-lettered or sent to be retried, how often admission was
// tried, and where the record first came from (so a retried record keeps its
// first identity, and an operator can find the original).
import type { IHeaders, KafkaMessage } from 'kafkajs';
import { ERROR_REASON_ATTRIBUTE } from '../../../core/surfaces/queue/queue-port.js';

export const ATTEMPTS_HEADER = 'palai-attempts';
export const SOURCE_TOPIC_HEADER = 'palai-source-topic';
export const SOURCE_PARTITION_HEADER = 'palai-source-partition';
export const SOURCE_OFFSET_HEADER = 'palai-source-offset';

/** Kafka headers carry no length limit worth relying on; a reason is a sentence, not a stack. */
const MAX_REASON_CHARS = 1000;

export interface RecordOrigin {
  topic: string;
  partition: number;
  offset: string;
}

function text(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

/** Where the record first came from: its source headers when Palai passed it on before, else where it is now. */
export function originOf(here: RecordOrigin, message: KafkaMessage): RecordOrigin {
  const topic = text(message.headers, SOURCE_TOPIC_HEADER);
  const partition = Number(text(message.headers, SOURCE_PARTITION_HEADER));
  const offset = text(message.headers, SOURCE_OFFSET_HEADER);
  if (topic && Number.isInteger(partition) && offset && /^\d+$/.test(offset)) return { topic, partition, offset };
  return here;
}

/** The broker's identity of a job: the same on every redelivery, and on every retry of it. */
export const messageIdOf = (origin: RecordOrigin) => `${origin.topic}/${origin.partition}/${origin.offset}`;

/** Admission attempts that failed before this delivery (0 for a record straight from a producer). */
export function attemptsOf(message: KafkaMessage): number {
  const attempts = Number(text(message.headers, ATTEMPTS_HEADER) ?? 0);
  return Number.isInteger(attempts) && attempts >= 0 ? attempts : 0;
}

/** The record's own headers plus why it is passed on and where it came from. */
export function passedOnHeaders(message: KafkaMessage, origin: RecordOrigin, reason: string, attempts?: number): IHeaders {
  return {
    ...message.headers,
    [ERROR_REASON_ATTRIBUTE]: reason.slice(0, MAX_REASON_CHARS),
    [SOURCE_TOPIC_HEADER]: origin.topic,
    [SOURCE_PARTITION_HEADER]: String(origin.partition),
    [SOURCE_OFFSET_HEADER]: origin.offset,
    ...(attempts === undefined ? {} : { [ATTEMPTS_HEADER]: String(attempts) }),
  };
}
