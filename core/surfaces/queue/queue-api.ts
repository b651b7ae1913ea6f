// The queue wing's slice of the kernel API: the kernel keeps the consumers and
// admits jobs exactly once (see queue-port.ts); the queue surface
// (adapters/queue) talks to the brokers. It receives this beside the KernelApi.
import type { CreateQueueConsumerRequest, QueueConsumer, UpdateQueueConsumerRequest } from '../../../generated/schemas.js';
import type { CommandOptions, KernelApi, Page, PageRequest } from '../../api/kernel-api.js';
import type { StatusAnnouncement } from '../../outbox/outbox-port.js';
import type { AdmissionOutcome, QueueConsumerConfig, QueueHealthReport, QueueMessage } from './queue-port.js';
import type { JobResult } from './results.js';

export type { JobResult };

export interface QueueApi {
  queues: {
    create(projectId: string, request: CreateQueueConsumerRequest, options?: CommandOptions): Promise<QueueConsumer>;
    get(projectId: string, ref: string): Promise<QueueConsumer>;
    list(projectId: string, page: PageRequest): Promise<Page<QueueConsumer>>;
    update(projectId: string, ref: string, request: UpdateQueueConsumerRequest): Promise<QueueConsumer>;
    /** The consumer's id. */
    delete(projectId: string, ref: string): Promise<string>;
    /** Every consumer of every project that is not paused, credentials revealed: only for the processes that run them. */
    runnable(): Promise<QueueConsumerConfig[]>;
    /** One consumer, credentials revealed (to send a result); null when it is gone. */
    config(projectId: string, consumerId: string): Promise<QueueConsumerConfig | null>;
    /** Calls `listener` with a consumer's id whenever it is created, changed or deleted, in any process. */
    onChange(listener: (consumerId: string) => void): Promise<() => Promise<void>>;
    /** Makes a message a response exactly once; see AdmissionOutcome. */
    admit(consumer: QueueConsumerConfig, message: QueueMessage): Promise<AdmissionOutcome>;
    /** The result a `queue_reply` delivery announces; null when it can never be sent. */
    result(projectId: string, announcement: StatusAnnouncement): Promise<JobResult | null>;
    /** Responses admitted and not yet started, across the store: what backpressure watches. */
    backlog(): Promise<number>;
    /** What this process found running the consumer (see QueueHealthReport); call it on a change only. */
    reportHealth(consumer: QueueConsumerConfig, report: QueueHealthReport): Promise<void>;
  };
}

/** What the queue surface is given. */
export type QueueSurfaceApi = KernelApi & QueueApi;
