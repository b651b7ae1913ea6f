// The one lease check. A worker writes under the fencing token its claim got; an
// API action (answering, cancelling) holds no lease and only takes the row lock.
// Either way the row stays locked to the end of the transaction, so nothing
// checked here can change before the writes that follow commit. (A journal
// append, a step's write and a status change check the same token inside their
// own statements — journal.ts, model-step.ts, status-writer.ts — so none of
// them costs a round trip of its own; this check is for the writes that follow it.)
import { LeaseLostError, type JournalWriter } from '../journal/journal.js';
import type { Queryable } from '../store/db.js';
import { findResponse, requireResponse, type ResponseRow } from './responses.js';

/** The check itself: a worker's token must be the response's current one; an API writer holds none. */
function checkLease(writer: JournalWriter, currentToken: number | undefined): void {
  if (currentToken === undefined || (writer.leaseToken !== null && currentToken !== writer.leaseToken)) throw new LeaseLostError(writer.responseId);
}

/**
 * Locks the response and fails with LeaseLostError unless `writer` still holds
 * its lease. A worker whose response was deleted holds nothing either; an API
 * writer asking for a response that is not there gets not-found.
 */
export async function lockUnderLease(tx: Queryable, writer: JournalWriter): Promise<ResponseRow> {
  const row =
    writer.leaseToken === null
      ? await requireResponse(tx, writer.projectId, writer.responseId, true)
      : await findResponse(tx, writer.projectId, writer.responseId, true);
  checkLease(writer, row?.lease_token);
  return row!;
}

/** The same, without reading the whole response: for writes that need only the guarantee. */
export async function assertLease(tx: Queryable, writer: JournalWriter): Promise<void> {
  const { rows } = await tx.query<{ lease_token: number }>('SELECT lease_token FROM responses WHERE id = $1 FOR UPDATE', [writer.responseId]);
  checkLease(writer, rows[0]?.lease_token);
}
