// The status writer's hook: in the transaction that journals a status change,
// one pending delivery per matching subscription — written by the very statement
// that journals the event, so a project nobody subscribes to pays one index
// lookup and no round trip; a rollback takes the deliveries with the event, and
// announcing the same event twice writes nothing new.
import type { ResponseStatus } from '../response-status.js';
import type { Queryable } from '../store/db.js';
import { SqlParams } from '../store/sql-params.js';
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
 * The deliveries as a CTE (`announced`, or `name`), for a statement that writes the event
 * too: `sequence` is an SQL expression over `from` (the append's `next`), so
 * nothing is announced when nothing is appended; so may the agent be (`agentIdSql`).
 */
export function announcementCte(
  p: SqlParams,
  change: Omit<StatusChangeAnnouncement, 'sequence' | 'agentId'> & { sequence: string; from?: string; name?: string } & (
      { agentId: string } | { agentIdSql: string }
    ),
): string {
  const responseId = p.add(change.responseId, 'text');
  const sequence = `(${change.sequence})::integer`;
  const status = p.add(change.status, 'text');
  return `${change.name ?? 'announced'} AS (
       INSERT INTO outbox_deliveries (id, project_id, consumer, target, subscription_id, response_id, event_sequence, payload)
       SELECT palai_new_id('dlv'), s.project_id, s.consumer, s.target, s.id, ${responseId}, ${sequence},
              jsonb_build_object('response_id', ${responseId}, 'sequence', ${sequence}, 'status', ${status})
         FROM outbox_subscriptions s${change.from ? `, ${change.from}` : ''}
        WHERE s.project_id = ${p.add(change.projectId, 'text')} AND ${status} = ANY (s.statuses)
          AND (s.response_id IS NULL OR s.response_id = ${responseId})
          AND (s.agent_id IS NULL OR s.agent_id = ${'agentIdSql' in change ? change.agentIdSql : p.add(change.agentId, 'text')})
       ON CONFLICT (subscription_id, response_id, event_sequence) WHERE subscription_id IS NOT NULL DO NOTHING
       RETURNING id, consumer)`;
}

/** A select-list term that sends the announced deliveries' NOTIFYs, one per consumer; they reach idle dispatchers at commit. */
export const announcedWakes = (p: SqlParams, name = 'announced'): string =>
  `(SELECT count(pg_notify(${p.add(OUTBOX_CHANNEL, 'text')}, consumer)) FROM ${name})`;

/**
 * Writes the deliveries (payload: a StatusAnnouncement) and returns their ids.
 * The NOTIFY, one per consumer, reaches idle dispatchers at commit.
 */
export async function announceStatus(tx: Queryable, change: StatusChangeAnnouncement): Promise<string[]> {
  const p = new SqlParams();
  const sql = `WITH ${announcementCte(p, { ...change, sequence: p.add(change.sequence, 'integer') })}
     SELECT id, pg_notify(${p.add(OUTBOX_CHANNEL, 'text')}, consumer) FROM announced`;
  const { rows } = await tx.query<{ id: string }>(sql, p.values);
  return rows.map((row) => row.id);
}
