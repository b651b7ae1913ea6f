// The status writer's hook: in the transaction that journals a status change,
// one pending delivery per matching subscription. One statement, so a project
// nobody subscribes to pays one index lookup; a rollback takes the deliveries
// with the event, and announcing the same event twice writes nothing new.
import type { ResponseStatus } from '../responses/status.js';
import type { Queryable } from '../store/db.js';
import { OUTBOX_CHANNEL } from './outbox-port.js';

export interface StatusChangeAnnouncement {
  projectId: string;
  responseId: string;
  agentId: string;
  /** The journal sequence of the event announcing the change. */
  sequence: number;
  status: ResponseStatus;
}

/**
 * Writes the deliveries (payload: a StatusAnnouncement) and returns their ids.
 * The NOTIFY, one per consumer, reaches idle dispatchers at commit.
 */
export async function announceStatus(tx: Queryable, change: StatusChangeAnnouncement): Promise<string[]> {
  const { rows } = await tx.query<{ id: string }>(
    `WITH inserted AS (
       INSERT INTO outbox_deliveries (id, project_id, consumer, target, subscription_id, response_id, event_sequence, payload)
       SELECT palai_new_id('dlv'), s.project_id, s.consumer, s.target, s.id, $2::text, $4::integer,
              jsonb_build_object('response_id', $2::text, 'sequence', $4::integer, 'status', $5::text)
         FROM outbox_subscriptions s
        WHERE s.project_id = $1::text AND $5::text = ANY (s.statuses)
          AND (s.response_id IS NULL OR s.response_id = $2::text)
          AND (s.agent_id IS NULL OR s.agent_id = $3::text)
       ON CONFLICT (subscription_id, response_id, event_sequence) WHERE subscription_id IS NOT NULL DO NOTHING
       RETURNING id, consumer)
     SELECT id, pg_notify($6, consumer) FROM inserted`,
    [change.projectId, change.responseId, change.agentId, change.sequence, change.status, OUTBOX_CHANNEL],
  );
  return rows.map((row) => row.id);
}
