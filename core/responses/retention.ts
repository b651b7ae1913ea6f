// Retention of finished responses, run by the housekeeping loop in bounded
// batches (each its own short transaction, rows taken with SKIP LOCKED so
// several processes share the work and nothing on the hot path waits):
//
// - compaction (PALAI_RETENTION_COMPACT_AFTER): a finished response's journal
//   keeps only its last event, the terminal one, which carries the whole
//   response (rebuilt from the row, which keeps its output, usage and error). A late reader of its
//   stream gets that one event; the fine-grained events are gone.
// - deletion (PALAI_RETENTION_DELETE_AFTER): the response, its journal, its
//   tool calls and its idempotency records go, as DELETE /v1/responses/{id}
//   does; what it added to a session stays there.
//
// Age counts from the response's creation (ids sort by it). Responses that
// wait or run are never touched.
import { idFloor } from '../ids.js';
import { TERMINAL_STATUSES } from '../response-status.js';
import { removeResponseRows } from './deletion.js';
import type { Db } from '../store/db.js';

const FINISHED = `status IN (${TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/** The smallest response id minted at `ms`: every response created before sorts below it. */
export const responseIdFloor = (ms: number): string => idFloor('resp', ms);

export interface RetentionBatch {
  responses: number;
  /** Rows removed (compaction: events; deletion: the responses and every row of theirs). */
  rows: number;
}

/** Compacts up to `limit` finished responses created more than `olderThanMs` ago. */
export async function compactFinished(db: Db, olderThanMs: number, limit: number, now = Date.now()): Promise<RetentionBatch> {
  return db.transaction(async (tx) => {
    const { rows: picked } = await tx.query<{ id: string }>(
      `SELECT id FROM responses WHERE compacted_at IS NULL AND ${FINISHED} AND id < $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [responseIdFloor(now - olderThanMs), limit],
    );
    if (picked.length === 0) return { responses: 0, rows: 0 };
    const ids = picked.map((r) => r.id);
    // Every event but the last of each: the terminal event stays, the one a late reader needs. Rows before
    // its row go; its row, a run of the step's events too, keeps only its last entry (the status).
    const removed = await tx.query<{ events: number }>(
      `WITH k AS (
         SELECT DISTINCT ON (response_id) response_id, last_sequence AS last, COALESCE(first_sequence, last_sequence) AS first
           FROM response_journal WHERE response_id = ANY($1::text[]) ORDER BY response_id, last_sequence DESC),
       removed AS (
         DELETE FROM response_journal e USING k WHERE e.response_id = k.response_id AND e.last_sequence < k.last
         RETURNING e.last_sequence - COALESCE(e.first_sequence, e.last_sequence) + 1 AS events),
       trimmed AS (
         UPDATE response_journal e SET data = jsonb_build_array(e.data->-1), first_sequence = NULL FROM k
          WHERE e.response_id = k.response_id AND e.last_sequence = k.last AND k.first < k.last
            AND jsonb_typeof(e.data) = 'array' AND (e.data->-1 ? 's' OR e.data->-1 ? 'type')
         RETURNING k.last - k.first AS events)
       SELECT (COALESCE((SELECT sum(events) FROM removed), 0) + COALESCE((SELECT sum(events) FROM trimmed), 0))::integer AS events`,
      [ids],
    );
    await tx.query('UPDATE responses SET compacted_at = now() WHERE id = ANY($1::text[])', [ids]);
    return { responses: ids.length, rows: removed.rows[0].events };
  });
}

/** Deletes up to `limit` finished responses created more than `olderThanMs` ago, with their rows. */
export async function deleteFinished(db: Db, olderThanMs: number, limit: number, now = Date.now()): Promise<RetentionBatch> {
  return db.transaction(async (tx) => {
    const { rows: picked } = await tx.query<{ id: string }>(
      `SELECT id FROM responses WHERE ${FINISHED} AND id < $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [responseIdFloor(now - olderThanMs), limit],
    );
    if (picked.length === 0) return { responses: 0, rows: 0 };
    const ids = picked.map((r) => r.id);
    // As DELETE /v1/responses/{id} (sessions keep their items), and their idempotency records too.
    const keys = await tx.query('DELETE FROM idempotency_keys WHERE resource_id = ANY($1::text[])', [ids]);
    const rows = keys.rowCount + (await removeResponseRows(tx, ids));
    return { responses: ids.length, rows };
  });
}

export interface RetentionSettings {
  compactAfterMs: number | null;
  deleteAfterMs: number | null;
  /** Responses per transaction (default 200). */
  batchSize?: number;
  /** Batches per pass and kind (default 50): one pass never runs long; the next goes on. */
  maxBatches?: number;
}

export interface RetentionPass {
  compacted: RetentionBatch;
  deleted: RetentionBatch;
}

/** One pass of the housekeeping loop: deletion first (nothing to compact in what goes), then compaction. */
export async function runRetention(db: Db, settings: RetentionSettings, now = Date.now()): Promise<RetentionPass> {
  const batchSize = settings.batchSize ?? 200;
  const maxBatches = settings.maxBatches ?? 50;
  const drain = async (step: () => Promise<RetentionBatch>): Promise<RetentionBatch> => {
    const total = { responses: 0, rows: 0 };
    for (let i = 0; i < maxBatches; i++) {
      const batch = await step();
      total.responses += batch.responses;
      total.rows += batch.rows;
      if (batch.responses < batchSize) break;
    }
    return total;
  };
  const none = { responses: 0, rows: 0 };
  const deleted = settings.deleteAfterMs === null ? none : await drain(() => deleteFinished(db, settings.deleteAfterMs!, batchSize, now));
  const compacted = settings.compactAfterMs === null ? none : await drain(() => compactFinished(db, settings.compactAfterMs!, batchSize, now));
  return { compacted, deleted };
}
