// The one lease check. A worker writes under the fencing token its claim got; an
// API action (answering, cancelling) holds no lease and only takes the row lock.
// Either way the row stays locked to the end of the transaction, so nothing
// checked here can change before the writes that follow commit. (A journal
// append checks the same token inside its one statement — journal.ts — so a
// streamed delta costs a single round trip.)
import { LeaseLostError, type JournalWriter } from '../journal/journal.js';
import type { Queryable } from '../store/db.js';
import { requireResponse, type ResponseRow } from './responses.js';

/** Locks the response and fails with LeaseLostError unless `writer` still holds its lease. */
export async function lockUnderLease(tx: Queryable, writer: JournalWriter): Promise<ResponseRow> {
  const row = await requireResponse(tx, writer.projectId, writer.responseId, true);
  if (writer.leaseToken !== null && row.lease_token !== writer.leaseToken) throw new LeaseLostError(writer.responseId);
  return row;
}

/** The same check without reading the whole response: for writes that need only the guarantee. */
export async function assertLease(tx: Queryable, writer: JournalWriter): Promise<void> {
  const { rows } = await tx.query<{ lease_token: number }>('SELECT lease_token FROM responses WHERE id = $1 FOR UPDATE', [writer.responseId]);
  if (rows.length === 0 || (writer.leaseToken !== null && rows[0].lease_token !== writer.leaseToken)) throw new LeaseLostError(writer.responseId);
}
