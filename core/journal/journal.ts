// The append-only event journal of each response. Sequence numbers come from the
// response row inside the writing transaction, so they are gap-free; a writer
// holding a stale lease token gets no sequence and its transaction rolls back.
import { isDeepStrictEqual } from 'node:util';
import type { Db, Queryable } from '../store/db.js';
import { SqlParams } from '../store/sql-params.js';
import { takeSequences } from '../responses/journal-sequences.js';
import { TERMINAL_STATUSES } from '../response-status.js';
import { isTerminalEvent, isWaitingEvent, type JournalEntry, type KernelEvent } from './journal-port.js';
import { journalEntries, RESPONSE_OF_ROW, rowEvents, type JournalRow } from './journal-rows.js';
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
  return appendEvents(db, writer, [event]);
}

export interface AppendOptions {
  /**
   * NOTIFY followers at commit (default true). Only admission passes false: a
   * response nobody has the id of yet has no follower, and whoever gets the id
   * reads its journal from the start (a project feed at its next wake-up or poll).
   */
  wake?: boolean;
  /** Further NOTIFYs (channel, payload) the same statement sends, so they cost no round trip of their own. */
  notify?: ReadonlyArray<readonly [string, string]>;
}

/**
 * The CTEs of an append, for statements that write more with it: `next` takes
 * the sequences (no row when the writer's lease is stale, so nothing joined to
 * it is written either), `next.first` is the first event's, and `inserted` writes
 * the events — one journal row for them all (journal-rows.ts). `take` replaces
 * the UPDATE that takes them, for a statement whose own UPDATE of the response
 * row takes them too (a row is updated once per statement): over `count`, it
 * returns `first`.
 */
export function appendCtes(p: SqlParams, writer: JournalWriter, events: readonly KernelEvent[], options: { take?: (count: string) => string } = {}): string {
  if (events.length === 0) throw new RangeError('an append needs at least one event');
  const count = p.add(events.length, 'integer');
  const id = p.add(writer.responseId, 'text');
  const take = options.take?.(count) ?? takeSequences(id, p.add(writer.leaseToken, 'integer'), count);
  const entries = JSON.stringify(journalEntries(writer.responseId, events));
  return `next AS (${take}),
     inserted AS (
       INSERT INTO response_journal (project_id, response_id, first_sequence, last_sequence, data)
       SELECT ${p.add(writer.projectId, 'text')}, ${id}, CASE WHEN ${count} > 1 THEN next.first END, next.first + ${count} - 1, ${p.add(entries, 'jsonb')}
         FROM next)`;
}

/** The NOTIFYs of an append, as select-list terms over `next` (sent only when the append happens). */
export function appendWakes(p: SqlParams, writer: JournalWriter, options: AppendOptions = {}): string {
  const wakes: Array<readonly [string, string]> = [
    ...(options.wake !== false ? [[EVENTS_CHANNEL, writer.responseId] as const] : []),
    ...(options.notify ?? []),
  ];
  return wakes.map(([channel, payload]) => `, pg_notify(${p.add(channel, 'text')}, ${p.add(payload, 'text')})`).join('');
}

/**
 * Appends events in order as one statement, the same way: one round trip for a
 * step's held events or a batch of deltas however many there are. Answers with
 * the sequence of the first; the others follow it without a gap.
 */
export async function appendEvents(db: Queryable, writer: JournalWriter, events: readonly KernelEvent[], options: AppendOptions = {}): Promise<number> {
  const p = new SqlParams();
  const sql = `WITH ${appendCtes(p, writer, events)} SELECT next.first${appendWakes(p, writer, options)} FROM next`;
  const { rows } = await db.query<{ first: number }>(sql, p.values);
  if (rows.length === 0) throw new LeaseLostError(writer.responseId);
  await verifyAppend(db, writer.responseId, rows[0].first, events);
  return rows[0].first;
}

/**
 * Tests set PALAI_JOURNAL_VERIFY=1: each append is read back at once, by
 * readEvents and through the response_events view (palai_journal_events, the
 * SQL decoder), and both must give exactly the events written, so every test
 * checks the journal's encoding.
 */
const VERIFY_APPENDS = process.env.PALAI_JOURNAL_VERIFY === '1';

/** `events` may be a function, for events built only to be checked (never when no test asks). */
export async function verifyAppend(
  db: Queryable,
  responseId: string,
  first: number,
  eventsOrBuild: readonly KernelEvent[] | (() => readonly KernelEvent[]),
): Promise<void> {
  if (!VERIFY_APPENDS) return;
  const events = typeof eventsOrBuild === 'function' ? eventsOrBuild() : eventsOrBuild;
  const written = JSON.parse(JSON.stringify(events.map((event, i) => ({ sequence: first + i, event })))) as unknown;
  const read = await readEvents(db, responseId, first - 1, events.length);
  const { rows } = await db.query<{ sequence: number; type: string; data: Record<string, unknown> }>(
    `SELECT e.sequence, e.type, e.data FROM response_journal j CROSS JOIN LATERAL palai_journal_events(j) e
      WHERE j.response_id = $1 AND j.last_sequence >= $2 AND e.sequence BETWEEN $2 AND $3 ORDER BY e.sequence`,
    [responseId, first, first + events.length - 1],
  );
  const viewed = rows.map((row) => ({ sequence: row.sequence, event: { type: row.type, ...row.data } }));
  for (const [how, got] of [
    ['readEvents', read],
    ['response_events', viewed],
  ] as const) {
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(got)), written))
      throw new Error(
        `journal of ${responseId} from ${first} reads back (${how}) otherwise than written:\nwritten ${JSON.stringify(written)}\nread    ${JSON.stringify(got)}`,
      );
  }
}

export async function readEvents(db: Queryable, responseId: string, afterSequence: number, limit = 500): Promise<JournalEntry[]> {
  const { rows } = await db.query<JournalRow>(
    `SELECT j.first_sequence, j.last_sequence, j.type, j.data, ${RESPONSE_OF_ROW}
       FROM response_journal j WHERE j.response_id = $1 AND j.last_sequence > $2 ORDER BY j.last_sequence LIMIT $3`,
    [responseId, afterSequence, limit],
  );
  const entries: JournalEntry[] = [];
  for (const row of rows) for (const entry of rowEvents(responseId, row)) if (entry.sequence > afterSequence && entries.length < limit) entries.push(entry);
  return entries;
}

/** The sequence of the response's latest event (-1 before its first). */
export async function lastSequence(db: Queryable, responseId: string): Promise<number> {
  const { rows } = await db.query<{ last: number }>('SELECT COALESCE(MAX(last_sequence), -1)::integer AS last FROM response_journal WHERE response_id = $1', [
    responseId,
  ]);
  return rows[0].last;
}

const BATCH = 500;

export interface FollowOptions {
  /** Replay events with a sequence greater than this (-1: from the start). */
  after: number;
  signal?: AbortSignal;
  pollMs?: number;
}

/**
 * True when nothing follows `sequence`: the response's terminal event is at or
 * before it, or the response was deleted. The terminal event is the journal's
 * last, committed with the terminal status: so the response row tells.
 */
async function endedBy(db: Queryable, responseId: string, sequence: number): Promise<boolean> {
  const { rows } = await db.query<{ ended: boolean }>(
    `SELECT NOT EXISTS (SELECT 1 FROM responses WHERE id = $1)
       OR EXISTS (SELECT 1 FROM responses WHERE id = $1 AND status = ANY($3::text[]) AND next_sequence - 1 <= $2) AS ended`,
    [responseId, sequence, [...TERMINAL_STATUSES]],
  );
  return rows[0]?.ended === true;
}

interface SharedRead {
  /** Wake-ups delivered when it began. */
  at: number;
  result: Promise<unknown>;
}

const sharedReads = new WeakMap<Db, Map<string, SharedRead>>();

/**
 * A follower's read, shared with every follower of the same response at the
 * same position: the append that wakes twenty subscribers of one response
 * costs one read, not twenty (and twenty subscribers arriving at a quiet
 * response, one check for its end). A follower joins a read in flight only if
 * no wake-up has been delivered since it began — the follower armed its wait
 * before joining, so whatever that read cannot see yet still wakes it.
 */
function shared<T>(db: Db, wakeups: Wakeups, key: string, read: () => Promise<T>): Promise<T> {
  let reads = sharedReads.get(db);
  if (!reads) sharedReads.set(db, (reads = new Map()));
  const current = reads.get(key);
  if (current && current.at === wakeups.delivered) return current.result as Promise<T>;
  const entry: SharedRead = { at: wakeups.delivered, result: read() };
  const inFlight = reads;
  inFlight.set(key, entry);
  const forget = () => {
    if (inFlight.get(key) === entry) inFlight.delete(key);
  };
  entry.result.then(forget, forget);
  return entry.result as Promise<T>;
}

/**
 * Replays the journal from `after`, then follows it live. It ends after the
 * terminal event, or after a waiting event that is the latest one (the response
 * now waits for the reader's side to act), or when `signal` aborts.
 */
export async function* followEvents(db: Db, wakeups: Wakeups, responseId: string, options: FollowOptions): AsyncGenerator<JournalEntry> {
  let last = options.after;
  let woken: ReturnType<Wakeups['arm']> | null = null;
  try {
    while (!options.signal?.aborted) {
      // Register interest before reading, so an append between read and wait still wakes us.
      woken = wakeups.arm(eventsKey(responseId), options.pollMs ?? 1000, options.signal);
      const after = last;
      const events = await shared(db, wakeups, `events\0${responseId}\0${after}`, () => readEvents(db, responseId, after, BATCH));
      if (events.length === 0) {
        // A reader resuming at or past the terminal event (or of a deleted response) would otherwise wait forever.
        if (await shared(db, wakeups, `ended\0${responseId}\0${after}`, () => endedBy(db, responseId, after))) return;
        await woken.promise;
        continue;
      }
      for (const [index, entry] of events.entries()) {
        last = entry.sequence;
        yield entry;
        if (isTerminalEvent(entry.event)) return;
        const latest = index === events.length - 1 && events.length < BATCH;
        if (latest && isWaitingEvent(entry.event)) return;
      }
      // Caught up: anything appended after this read wakes the wait armed before it,
      // so there is nothing to read until then (no empty read, no end check per event).
      if (events.length < BATCH) await woken.promise;
    }
  } finally {
    woken?.cancel();
  }
}
