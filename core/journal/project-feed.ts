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
import { RESPONSE_OF_ROW, rowEvents, type JournalRow } from './journal-rows.js';
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
interface FeedRow extends JournalRow {
  cursor_tx: string;
  cursor_position: string;
  response_id: string;
}

/** Up to `limit` events of the project after `after`, optionally only of some `types`. */
export async function readProjectEvents(
  db: Queryable,
  projectId: string,
  after: FeedCursor,
  limit = BATCH,
  types?: KernelEventTypeFilter,
): Promise<FeedEntry[]> {
  let from = parseCursor(after);
  const wanted = types ? new Set<string>(types) : null;
  const entries: FeedEntry[] = [];
  // A row holds one or more events; with `types`, a batch of rows may hold none wanted, so read on until `limit` or the end.
  for (;;) {
    const { rows } = await db.query<FeedRow>(
      `SELECT j.tx_id::text AS cursor_tx, j.position::text AS cursor_position, j.response_id, j.first_sequence, j.last_sequence, j.type, j.data,
              ${RESPONSE_OF_ROW}
         FROM response_journal j
        WHERE j.project_id = $1
          AND (j.tx_id, j.position) >= ($2::xid8, $3::bigint)
          AND ((j.tx_id, j.position) > ($2::xid8, $3::bigint) OR j.last_sequence > $6)
          AND j.tx_id < pg_snapshot_xmin(pg_current_snapshot())
          AND ($5::text[] IS NULL OR j.type IS NULL OR j.type = ANY($5::text[]))
        ORDER BY j.tx_id, j.position
        LIMIT $4`,
      [projectId, from.txId, from.position, limit, types ?? null, from.sequence],
    );
    for (const row of rows) {
      const start = row.cursor_tx === from.txId && row.cursor_position === from.position ? from.sequence : -1;
      for (const { sequence, event } of rowEvents(row.response_id, row)) {
        if (sequence <= start || (wanted && !wanted.has(event.type))) continue;
        const cursor = `${row.cursor_tx}.${row.cursor_position}${sequence === row.last_sequence ? '' : `.${sequence}`}`;
        entries.push({ cursor, responseId: row.response_id, sequence, event });
        if (entries.length === limit) return entries;
      }
    }
    if (rows.length < limit || !wanted) return entries;
    const last = rows.at(-1)!;
    from = { txId: last.cursor_tx, position: last.cursor_position, sequence: MAX_SEQUENCE };
  }
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
