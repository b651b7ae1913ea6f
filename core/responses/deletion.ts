// Deleting a response (OpenAI's DELETE /responses/{id}): the response, its
// journal and its tool calls go; what it contributed to a session stays there,
// and responses that continued from it keep their own items but no longer
// point at it. A running response is deleted from under its worker: the
// cancel NOTIFY interrupts it, and its next write finds no lease to write under.
import { CANCEL_CHANNEL } from '../journal/wakeups.js';
import type { Db, Queryable } from '../store/db.js';
import { requireResponse } from './responses.js';

/**
 * Removes these responses with their journal, tool calls and outbox
 * subscriptions, in the caller's transaction; session items stay (unlinked),
 * and responses that continued from one keep their own rows but lose the link.
 * Outbox deliveries already written stay: an event that committed is still
 * delivered, and its consumer learns the response is gone when it looks.
 * Answers the rows removed. Retention deletes in batches through it too.
 */
export async function removeResponseRows(tx: Queryable, ids: string[]): Promise<number> {
  await tx.query('UPDATE session_items SET response_id = NULL WHERE response_id = ANY($1::text[])', [ids]);
  await tx.query('UPDATE responses SET previous_response_id = NULL WHERE previous_response_id = ANY($1::text[])', [ids]);
  let rows = 0;
  for (const statement of [
    'DELETE FROM tool_calls WHERE response_id = ANY($1::text[])',
    'DELETE FROM response_journal WHERE response_id = ANY($1::text[])',
    'DELETE FROM outbox_subscriptions WHERE response_id = ANY($1::text[])',
    'DELETE FROM responses WHERE id = ANY($1::text[])',
  ])
    rows += (await tx.query(statement, [ids])).rowCount;
  return rows;
}

export async function deleteResponse(db: Db, projectId: string, responseId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await requireResponse(tx, projectId, responseId, true);
    await removeResponseRows(tx, [row.id]);
    await tx.query('SELECT pg_notify($1, $2)', [CANCEL_CHANNEL, row.id]);
  });
}
