// Deleting a response (OpenAI's DELETE /responses/{id}): the response, its
// journal and its tool calls go; what it contributed to a session stays there,
// and responses that continued from it keep their own items but no longer
// point at it. A running response is deleted from under its worker: the
// cancel NOTIFY interrupts it, and its next write finds no lease to write under.
import { CANCEL_CHANNEL } from '../journal/wakeups.js';
import { unsubscribeResponse } from '../outbox/subscriptions.js';
import type { Db } from '../store/db.js';
import { requireResponse } from './responses.js';

export async function deleteResponse(db: Db, projectId: string, responseId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await requireResponse(tx, projectId, responseId, true);
    await tx.query('UPDATE session_items SET response_id = NULL WHERE response_id = $1', [row.id]);
    await tx.query('UPDATE responses SET previous_response_id = NULL WHERE previous_response_id = $1', [row.id]);
    await tx.query('DELETE FROM tool_calls WHERE response_id = $1', [row.id]);
    await tx.query('DELETE FROM response_events WHERE response_id = $1', [row.id]);
    await unsubscribeResponse(tx, projectId, row.id);
    await tx.query('DELETE FROM responses WHERE id = $1', [row.id]);
    await tx.query('SELECT pg_notify($1, $2)', [CANCEL_CHANNEL, row.id]);
  });
}
