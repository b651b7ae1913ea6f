// Prometheus metrics (prom-client), one registry per hub so tests and several
// hubs in one process do not collide. Served at GET /metrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { countDeliveries } from './outbox/deliveries.js';
import { DELIVERY_STATUSES } from './outbox/outbox-port.js';
import type { Db } from './store/db.js';

export class Metrics {
  readonly registry = new Registry();
  readonly responsesFinished = new Counter({
    name: 'palai_responses_finished_total',
    help: 'Responses the workers of this process brought to a terminal status, by status (palai_responses counts all, by current status).',
    labelNames: ['status'],
    registers: [this.registry],
  });
  readonly stepLatency = new Histogram({
    name: 'palai_model_step_seconds',
    help: 'Duration of one model step, first request to committed result.',
    labelNames: ['provider'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly toolLatency = new Histogram({
    name: 'palai_tool_call_seconds',
    help: 'Duration of one tool execution.',
    labelNames: ['tool'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30],
    registers: [this.registry],
  });
  readonly leaseTakeovers = new Counter({
    name: 'palai_lease_takeovers_total',
    help: 'Responses taken over from a worker whose lease expired or was handed back.',
    registers: [this.registry],
  });
  readonly storeInterruptions = new Counter({
    name: 'palai_run_store_interruptions_total',
    help: 'Runs interrupted by a database error and handed back to continue from their last commit.',
    registers: [this.registry],
  });
  readonly activeStreams = new Gauge({ name: 'palai_active_streams', help: 'Open SSE streams in this process.', registers: [this.registry] });
  readonly outboxAttempts = new Counter({
    name: 'palai_outbox_attempts_total',
    help: 'Outbox delivery attempts this process ended, by consumer and outcome (delivered, retry, dead, released, lease_lost).',
    labelNames: ['consumer', 'outcome'],
    registers: [this.registry],
  });
  readonly queueMessages = new Counter({
    name: 'palai_queue_messages_total',
    help: 'Queue messages this process handled, by consumer id and outcome (received, admitted, duplicate, dead_lettered, failed).',
    labelNames: ['consumer', 'outcome'],
    registers: [this.registry],
  });
  readonly queueInFlight = new Gauge({
    name: 'palai_queue_in_flight',
    help: 'Queue messages this process holds unadmitted, by consumer id.',
    labelNames: ['consumer'],
    registers: [this.registry],
  });
  readonly queueLag = new Gauge({
    name: 'palai_queue_consumer_lag',
    help: 'Kafka: records behind the end of the topic in the partitions this process holds, by consumer id.',
    labelNames: ['consumer'],
    registers: [this.registry],
  });
  readonly queueSourceDepth = new Gauge({
    name: 'palai_queue_source_depth',
    help: 'SQS: messages visible in the source queue (ApproximateNumberOfMessages), by consumer id.',
    labelNames: ['consumer'],
    registers: [this.registry],
  });
  readonly tokens = new Counter({
    name: 'palai_model_tokens_total',
    help: 'Model tokens used, by kind (input, output, cached).',
    labelNames: ['kind'],
    registers: [this.registry],
  });

  readonly retentionRows = new Counter({
    name: 'palai_retention_rows_total',
    help: 'Rows retention removed: journal events of compacted responses (action="compacted"), and deleted responses with their rows (action="deleted").',
    labelNames: ['action'],
    registers: [this.registry],
  });
  readonly retentionResponses = new Counter({
    name: 'palai_retention_responses_total',
    help: 'Finished responses retention compacted or deleted, by action.',
    labelNames: ['action'],
    registers: [this.registry],
  });

  constructor(db: Db) {
    new Gauge({
      name: 'palai_queue_depth',
      help: 'Responses waiting for a worker (queued, or runnable again).',
      registers: [this.registry],
      async collect() {
        const { rows } = await db.query<{ depth: number }>(
          `SELECT count(*)::integer AS depth FROM responses
           WHERE status = 'queued' OR (status = 'in_progress' AND (lease_expires_at IS NULL OR lease_expires_at < now()))`,
        );
        this.set(rows[0]?.depth ?? 0);
      },
    });
    new Gauge({
      name: 'palai_responses',
      help: 'Responses by current status (all projects).',
      labelNames: ['status'],
      registers: [this.registry],
      async collect() {
        const { rows } = await db.query<{ status: string; count: number }>('SELECT status, count(*)::integer AS count FROM responses GROUP BY status');
        this.reset();
        for (const row of rows) this.set({ status: row.status }, row.count);
      },
    });
    new Gauge({
      name: 'palai_outbox_deliveries',
      help: 'Outbox deliveries by status (all projects): pending, delivered, dead.',
      labelNames: ['status'],
      registers: [this.registry],
      async collect() {
        const counts = await countDeliveries(db);
        for (const status of DELIVERY_STATUSES) this.set({ status }, counts[status]);
      },
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'palai_process_' });
  }
}
