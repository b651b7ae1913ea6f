// The journal read across a whole project: every response's events in one
// global order from a cursor, for outbox writers and projections, then live.
// Only rows below the snapshot horizon are read (every transaction older than
// pg_snapshot_xmin has ended), so no row can later commit before a cursor
// already handed out: resuming never skips an event. A response's events come
// in sequence order; events of different responses come in the order their
// transactions took ids, which is commit order for transactions that do not
// overlap (migration 0008 explains the tx_id column). An open transaction
// anywhere on the server holds the feed back until it ends.
import { PalaiError } from '../errors/palai-error.js';
import type { Db, Queryable } from '../store/db.js';
import type { FeedCursor, KernelEvent } from './journal-port.js';
import { anyEventKey, type Wakeups } from './wakeups.js';

export type { FeedCursor };

/** The cursor before a project's first event. */
export const FEED_START: FeedCursor = '';

export interface FeedEntry {
  /** Resume after this entry by passing it as `after`. */
  cursor: FeedCursor;
  responseId: string;
  sequence: number;
  event: KernelEvent;
}

export type KernelEventTypeFilter = KernelEvent['type'][];

// `${tx_id}.${position}` after a journal row, `${tx_id}.${position}.${sequence}` after one event of
// a row that holds more (migration 0033): xid8 is unsigned 64-bit, position a positive bigint.
const CURSOR = /^(\d{1,20})\.(\d{1,19})(?:\.(\d{1,10}))?$/;
const MAX_TX_ID = 2n ** 64n - 1n;
const MAX_POSITION = 2n ** 63n - 1n;
const MAX_SEQUENCE = 2 ** 31 - 1;
const BATCH = 500;

interface CursorParts {
  txId: string;
  position: string;
  /** Within the row: after this event's sequence (the whole row: MAX_SEQUENCE). */
  sequence: number;
}

function parseCursor(cursor: FeedCursor): CursorParts {
  if (cursor === FEED_START) return { txId: '0', position: '0', sequence: MAX_SEQUENCE };
  const match = typeof cursor === 'string' ? CURSOR.exec(cursor) : null;
  const sequence = match?.[3] === undefined ? MAX_SEQUENCE : Number(match[3]);
  if (!match || BigInt(match[1]) > MAX_TX_ID || BigInt(match[2]) > MAX_POSITION || sequence > MAX_SEQUENCE) {
    throw new PalaiError('invalid-request', `${JSON.stringify(cursor)} is not a feed cursor; pass one a feed returned, or start from the beginning.`);
  }
  return { txId: BigInt(match[1]).toString(), position: BigInt(match[2]).toString(), sequence };
}

// Cursor columns are renamed: an ORDER BY naming an output column would sort their text.
interface FeedRow {
  cursor_tx: string;
  cursor_position: string;
  response_id: string;
  sequence: number;
  type: string;
  data: Record<string, unknown>;
  /** Whether it is its row's last event. */
  row_end: boolean;
}

/** Up to `limit` events of the project after `after`, optionally only of some `types`. */
export async function readProjectEvents(
  db: Queryable,
  projectId: string,
  after: FeedCursor,
  limit = BATCH,
  types?: KernelEventTypeFilter,
): Promise<FeedEntry[]> {
  const from = parseCursor(after);
  const { rows } = await db.query<FeedRow>(
    `SELECT j.tx_id::text AS cursor_tx, j.position::text AS cursor_position, j.response_id, e.sequence, e.type, e.data,
            e.sequence = j.last_sequence AS row_end
       FROM response_journal j CROSS JOIN LATERAL palai_journal_events(j) e
      WHERE j.project_id = $1
        AND (j.tx_id, j.position) >= ($2::xid8, $3::bigint)
        AND (j.tx_id, j.position, e.sequence) > ($2::xid8, $3::bigint, $6::integer)
        AND j.tx_id < pg_snapshot_xmin(pg_current_snapshot())
        AND ($5::text[] IS NULL OR e.type = ANY($5::text[]))
      ORDER BY j.tx_id, j.position, e.sequence
      LIMIT $4`,
    [projectId, from.txId, from.position, limit, types ?? null, from.sequence],
  );
  return rows.map((row) => ({
    cursor: `${row.cursor_tx}.${row.cursor_position}${row.row_end ? '' : `.${row.sequence}`}`,
    responseId: row.response_id,
    sequence: row.sequence,
    event: { type: row.type, ...row.data } as KernelEvent,
  }));
}

/** The cursor after every event the feed can return now: reading from it yields only what comes later. */
export async function latestCursor(db: Queryable, projectId: string): Promise<FeedCursor> {
  const { rows } = await db.query<Pick<FeedRow, 'cursor_tx' | 'cursor_position'>>(
    `SELECT tx_id::text AS cursor_tx, position::text AS cursor_position
       FROM response_journal
      WHERE project_id = $1 AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY tx_id DESC, position DESC
      LIMIT 1`,
    [projectId],
  );
  return rows.length === 0 ? FEED_START : `${rows[0].cursor_tx}.${rows[0].cursor_position}`;
}

export interface FollowProjectOptions {
  /** Replay events after this cursor (`FEED_START`: from the first). */
  after: FeedCursor;
  /** Ends the feed; without it the feed follows forever. */
  signal?: AbortSignal;
  /** The backstop poll while idle, in milliseconds. Default 1000. */
  pollMs?: number;
  /** Only events of these types. Default: every type. */
  types?: KernelEventTypeFilter;
}

/**
 * Replays the project's events after `options.after`, then follows them live
 * until `signal` aborts. Polling is not only for lost notifications: a row held
 * back by the horizon becomes readable when an older transaction ends, which
 * sends no notification when it wrote no event.
 */
export async function* followProjectEvents(db: Db, wakeups: Wakeups, projectId: string, options: FollowProjectOptions): AsyncGenerator<FeedEntry> {
  let cursor = options.after;
  parseCursor(cursor);
  while (!options.signal?.aborted) {
    // Register interest before reading, so an append between read and wait still wakes us.
    const woken = wakeups.arm(anyEventKey, options.pollMs ?? 1000, options.signal);
    const entries = await readProjectEvents(db, projectId, cursor, BATCH, options.types);
    if (entries.length === 0) {
      await woken.promise;
      continue;
    }
    woken.cancel();
    for (const entry of entries) {
      if (options.signal?.aborted) return;
      cursor = entry.cursor;
      yield entry;
    }
  }
}
