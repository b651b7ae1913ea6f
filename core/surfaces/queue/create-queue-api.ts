// Binds the queue wing's slice to one kernel.
import { atBoundary } from '../../api/boundary.js';
import type { Kernel } from '../../kernel.js';
import { admitJob } from './admission.js';
import {
  createQueueConsumer,
  deleteQueueConsumer,
  getQueueConsumer,
  listQueueConsumers,
  queueConsumerConfig,
  runnableQueueConsumers,
  updateQueueConsumer,
} from './consumers.js';
import type { QueueApi } from './queue-api.js';
import { reportHealth } from './health.js';
import { QUEUE_CONSUMERS_CHANNEL } from './queue-port.js';
import { jobResult, queuedBacklog } from './results.js';

export function createQueueApi({ db, secrets, inbox }: Kernel): QueueApi {
  return atBoundary({
    queues: {
      create: (projectId, request, options) => createQueueConsumer(db, secrets, projectId, request, options?.idempotency),
      get: (projectId, ref) => getQueueConsumer(db, projectId, ref),
      list: (projectId, page) => listQueueConsumers(db, projectId, page),
      update: (projectId, ref, request) => updateQueueConsumer(db, secrets, projectId, ref, request),
      delete: (projectId, ref) => deleteQueueConsumer(db, secrets, projectId, ref),
      runnable: () => runnableQueueConsumers(db, secrets),
      config: (projectId, id) => queueConsumerConfig(db, secrets, projectId, id),
      onChange: (listener) => db.listen(QUEUE_CONSUMERS_CHANNEL, listener),
      admit: (consumer, message) => admitJob(db, inbox, consumer, message),
      result: (projectId, announcement) => jobResult(db, projectId, announcement),
      backlog: () => queuedBacklog(db),
      reportHealth: (consumer, report) => reportHealth(db, consumer, report),
    },
  });
}
