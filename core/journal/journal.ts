// The append-only event journal of each response. Sequence numbers come from the
// response row inside the writing transaction, so they are gap-free; a writer
// holding a stale lease token gets no sequence and its transaction rolls back.
import type { Db, Queryable } from '../store/db.js';
import { TERMINAL_STATUSES } from '../responses/status.js';
import { isTerminalEvent, isWaitingEvent, type JournalEntry, type KernelEvent } from './journal-port.js';
import { EVENTS_CHANNEL, eventsKey, type Wakeups } from './wakeups.js';

export type { JournalEntry, KernelEvent };

/** Who may append: admission (no lease yet) or the worker holding `leaseToken`. */
export interface JournalWriter {
  projectId: string;
  responseId: string;
  leaseToken: number | null;
}

export class LeaseLostError extends Error {
  constructor(responseId: string) {
    super(`lease on ${responseId} is no longer held by this worker`);
    this.name = 'LeaseLostError';
  }
}

/**
 * Appends one event as a single atomic statement: take the next sequence (only
 * with a current lease token), insert the event, NOTIFY followers. Inside a
 * transaction the NOTIFY is delivered at commit.
 */
export async function appendEvent(db: Queryable, writer: JournalWriter, event: KernelEvent): Promise<number> {
  const { type, ...payload } = event;
  const { rows } = await db.query<{ sequence: number }>(
    `WITH next AS (
       UPDATE responses SET next_sequence = next_sequence + 1
       WHERE id = $1 AND ($2::integer IS NULL OR lease_token = $2)
       RETURNING next_sequence - 1 AS sequence),
     inserted AS (
       INSERT INTO response_events (project_id, response_id, sequence, type, data)
       SELECT $3, $1, sequence, $4, $5 FROM next RETURNING sequence)
     SELECT sequence, pg_notify($6, $1) FROM inserted`,
    [writer.responseId, writer.leaseToken, writer.projectId, type, JSON.stringify(payload), EVENTS_CHANNEL],
  );
  if (rows.length === 0) throw new LeaseLostError(writer.responseId);
  return rows[0].sequence;
}

export async function readEvents(db: Queryable, responseId: string, afterSequence: number, limit = 500): Promise<JournalEntry[]> {
  const { rows } = await db.query<{ sequence: number; type: string; data: Record<string, unknown> }>(
    'SELECT sequence, type, data FROM response_events WHERE response_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3',
    [responseId, afterSequence, limit],
  );
  return rows.map((row) => ({ sequence: row.sequence, event: { type: row.type, ...row.data } as KernelEvent }));
}

/** The sequence of the response's latest event (-1 before its first). */
export async function lastSequence(db: Queryable, responseId: string): Promise<number> {
  const { rows } = await db.query<{ last: number }>('SELECT COALESCE(MAX(sequence), -1)::integer AS last FROM response_events WHERE response_id = $1', [responseId]);
  return rows[0].last;
}

const BATCH = 500;

export interface FollowOptions {
  /** Replay events with a sequence greater than this (-1: from the start). */
  after: number;
  signal?: AbortSignal;
  pollMs?: number;
}

/** True when nothing follows `sequence`: the response's terminal event is at or before it, or the response was deleted. */
async function endedBy(db: Queryable, responseId: string, sequence: number): Promise<boolean> {
  const { rows } = await db.query<{ ended: boolean }>(
    `SELECT NOT EXISTS (SELECT 1 FROM responses WHERE id = $1)
       OR EXISTS (SELECT 1 FROM response_events WHERE response_id = $1 AND sequence <= $2 AND type = 'status'
         AND data->>'status' = ANY($3::text[])) AS ended`,
    [responseId, sequence, [...TERMINAL_STATUSES]],
  );
  return rows[0]?.ended === true;
}

/**
 * Replays the journal from `after`, then follows it live. It ends after the
 * terminal event, or after a waiting event that is the latest one (the response
 * now waits for the reader's side to act), or when `signal` aborts.
 */
export async function* followEvents(db: Db, wakeups: Wakeups, responseId: string, options: FollowOptions): AsyncGenerator<JournalEntry> {
  let last = options.after;
  while (!options.signal?.aborted) {
    // Register interest before reading, so an append between read and wait still wakes us.
    const woken = wakeups.arm(eventsKey(responseId), options.pollMs ?? 1000, options.signal);
    const events = await readEvents(db, responseId, last, BATCH);
    if (events.length === 0) {
      // A reader resuming at or past the terminal event (or of a deleted response) would otherwise wait forever.
      if (await endedBy(db, responseId, last)) {
        woken.cancel();
        return;
      }
      await woken.promise;
      continue;
    }
    woken.cancel();
    for (const [index, entry] of events.entries()) {
      last = entry.sequence;
      yield entry;
      if (isTerminalEvent(entry.event)) return;
      const latest = index === events.length - 1 && events.length < BATCH;
      if (latest && isWaitingEvent(entry.event)) return;
    }
  }
}
