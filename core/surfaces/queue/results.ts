// A job's result, built from the journal event that announced the status, so
// every attempt of one delivery carries the same body.
import type { QueueResult } from '../../../generated/protocol-schemas.js';
import { readEvents } from '../../journal/journal.js';
import type { StatusAnnouncement } from '../../outbox/outbox-port.js';
import { outputText } from '../../responses/items.js';
import type { ResponseStatus } from '../../response-status.js';
import type { Queryable } from '../../store/db.js';

/** A job's result and where it goes. */
export interface JobResult {
  result: QueueResult;
  /** The reply queue URL or topic. */
  replyTo: string;
  consumerId: string;
}

const RESULT_STATUS: Partial<Record<ResponseStatus, QueueResult['status']>> = {
  completed: 'completed',
  failed: 'failed',
  canceled: 'canceled',
  timed_out: 'incomplete',
  budget_exceeded: 'incomplete',
  waiting_for_approval: 'waiting_for_approval',
  waiting_for_input: 'waiting_for_input',
  waiting_for_tool: 'waiting_for_tool',
};

/** The result an announcement stands for; null when it can never be sent (the response or its event is gone). */
export async function jobResult(db: Queryable, projectId: string, announcement: StatusAnnouncement): Promise<JobResult | null> {
  const { rows } = await db.query<{ consumer_id: string; idempotency_key: string | null; reply_to: string | null }>(
    'SELECT consumer_id, idempotency_key, reply_to FROM queue_jobs WHERE response_id = $1 AND project_id = $2',
    [announcement.response_id, projectId],
  );
  const job = rows[0];
  if (!job || job.reply_to === null) return null;
  const [entry] = await readEvents(db, announcement.response_id, announcement.sequence - 1, 1);
  const status = RESULT_STATUS[announcement.status];
  if (!entry || entry.sequence !== announcement.sequence || entry.event.type !== 'status' || !status) return null;
  const response = entry.event.response;
  return {
    consumerId: job.consumer_id,
    replyTo: job.reply_to,
    result: {
      idempotency_key: job.idempotency_key,
      response_id: response.id,
      status,
      output_text: outputText(response.output),
      output: response.output,
      error: response.error,
      usage: response.usage,
      metadata: response.metadata,
    },
  };
}

/** Responses admitted and not yet started, in every project. */
export async function queuedBacklog(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::integer AS n FROM responses WHERE status = 'queued'");
  return rows[0].n;
}
