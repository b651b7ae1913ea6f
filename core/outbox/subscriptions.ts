// Subscriptions: which response status changes a consumer's target wants
// announced. The status writer reads them (announce.ts) in the transaction of
// every status change; surfaces write them when their own resource is created
// (a webhook endpoint, an A2A push config).
import { PalaiError } from '../errors/palai-error.js';
import { newId } from '../ids.js';
import { TRANSITIONS, type ResponseStatus } from '../response-status.js';
import { holdStatusChanges } from '../responses/status-writer.js';
import type { Queryable } from '../store/db.js';
import type { OutboxSubscription, OutboxSubscriptionInput } from './outbox-port.js';

const KNOWN_STATUSES = new Set(Object.keys(TRANSITIONS));

interface SubscriptionRow {
  id: string;
  project_id: string;
  consumer: string;
  target: string;
  statuses: ResponseStatus[];
  response_id: string | null;
  agent_id: string | null;
  created_at: Date;
}

const fromRow = (row: SubscriptionRow): OutboxSubscription => ({
  id: row.id,
  projectId: row.project_id,
  consumer: row.consumer,
  target: row.target,
  statuses: row.statuses,
  responseId: row.response_id,
  agentId: row.agent_id,
  createdAt: row.created_at,
});

/** Refuses an empty status list or an unknown status (invalid-request); returns the new subscription's id. */
export async function subscribe(q: Queryable, input: OutboxSubscriptionInput): Promise<string> {
  const unknown = input.statuses.filter((status) => !KNOWN_STATUSES.has(status));
  if (input.statuses.length === 0 || unknown.length > 0) {
    const what = unknown.length > 0 ? `unknown status(es) ${unknown.map((s) => JSON.stringify(s)).join(', ')}` : 'no status';
    throw new PalaiError('invalid-request', `A subscription names ${what}; use some of: ${[...KNOWN_STATUSES].join(', ')}.`);
  }
  const id = newId('osub');
  // A subscription to one response waits for a status change in flight, and
  // holds back the next until it commits: that change's own statement then
  // sees it, and a read of the status after the commit sees the one before.
  // Without this, a change whose announce ran just before the INSERT but that
  // commits after a caller's read of the status is announced to nobody.
  // Run it in a transaction, so the lock lasts until the INSERT commits.
  if (input.responseId) await holdStatusChanges(q, input.projectId, input.responseId);
  await q.query(
    `INSERT INTO outbox_subscriptions (id, project_id, consumer, target, statuses, response_id, agent_id)
     VALUES ($1, $2, $3, $4, $5::text[], $6, $7)`,
    [id, input.projectId, input.consumer, input.target, [...new Set(input.statuses)], input.responseId ?? null, input.agentId ?? null],
  );
  return id;
}

/**
 * Removes a subscription; false when the project has none with this id.
 * Deliveries it already wrote stay and are still carried out.
 */
export async function unsubscribe(q: Queryable, projectId: string, id: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM outbox_subscriptions WHERE project_id = $1 AND id = $2', [projectId, id]);
  return rowCount > 0;
}

/** A project's subscriptions, oldest first, optionally of one consumer or target. */
export async function listSubscriptions(q: Queryable, projectId: string, filter: { consumer?: string; target?: string } = {}): Promise<OutboxSubscription[]> {
  const { rows } = await q.query<SubscriptionRow>(
    `SELECT id, project_id, consumer, target, statuses, response_id, agent_id, created_at FROM outbox_subscriptions
     WHERE project_id = $1 AND ($2::text IS NULL OR consumer = $2) AND ($3::text IS NULL OR target = $3)
     ORDER BY id`,
    [projectId, filter.consumer ?? null, filter.target ?? null],
  );
  return rows.map(fromRow);
}
