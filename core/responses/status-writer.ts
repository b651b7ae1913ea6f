// The one status writer. Every change of a response's status goes through
// changeStatus, whose UPDATE holds only where the transition table (status.ts)
// allows it and the writer's lease is current, and which journals the `status`
// event that announces it — with the outbox deliveries subscribed to it — in the
// same transaction, so state, journal and deliveries never disagree. Two
// statements, neither a read: the UPDATE returns the row the event carries.
// The end is one statement (finishWrite): its UPDATE takes the sequences too, so
// a worker's end needs no transaction (finishAtOnce).
//
// A worker writes under its lease token; an API action (answering a waiting
// response, cancelling) locks the row and bumps the token, fencing out any worker
// that might still think it owns the response. The one other status write is
// a worker's claim (runner/claim.ts), which takes only CLAIMABLE_STATUSES.
import type { Item, ResponseError, Usage } from '../../generated/schemas.js';
import { PalaiError } from '../errors/palai-error.js';
import { appendCtes, appendWakes, LeaseLostError, verifyAppend, type AppendOptions, type JournalWriter, type KernelEvent } from '../journal/journal.js';
import { statusEventOf, terminalStatusEvent } from '../journal/journal-rows.js';
import { WORK_CHANNEL } from '../journal/wakeups.js';
import { announcedWakes, announcementCte } from '../outbox/announce.js';
import { sessionAppendCtes } from '../sessions/sessions.js';
import type { Db, Queryable } from '../store/db.js';
import { SqlParams } from '../store/sql-params.js';
import type { ToolCallRow } from '../tools/tool-calls.js';
import { lockUnderLease } from './lease.js';
import { RESPONSE_COLUMNS, RESPONSE_JOIN, responseColumnsOf, responseState, updateResponse, type ResponseRow } from './responses.js';
import {
  canTransition,
  isTerminal,
  TRANSITIONS,
  type ResponseStatus,
  type SuspendedStatus,
  type TerminalStatus,
  type WaitingStatus,
} from '../response-status.js';

export type { SuspendedStatus, TerminalStatus, WaitingStatus };

export interface Outcome {
  status: TerminalStatus;
  /** Items to add at the end of the output (the last step's, or none). */
  output: Item[];
  /** The run's usage; left as it is when absent. */
  usage?: Usage | null;
  error: ResponseError | null;
  /** The model step the run ends with, written by the same statements: its held events go just before the terminal one. */
  step?: {
    events: readonly KernelEvent[];
    /** Set when the step reached its end: it counts as a model call with this usage (a cut-off step does not). */
    usage?: Usage;
  };
  /**
   * The response has no session, as its row said: a worker's end first tries
   * the statement without the session's writes, which holds only on a row with
   * no session (finishAtOnce).
   */
  sessionless?: boolean;
}

/** The change to make: back to the workers, a wait (or parked), or the end. */
export type StatusChange = { to: 'in_progress' } | { to: SuspendedStatus } | Outcome;

export class IllegalTransition extends Error {
  constructor(responseId: string, from: string, to: string) {
    super(`response ${responseId} may not go from ${from} to ${to}`);
    this.name = 'IllegalTransition';
  }
}

export interface StatusJournalOptions extends AppendOptions {
  /** Events journaled just before the status event, in the same statement (the last step's). */
  before?: readonly KernelEvent[];
}

/**
 * Journals the status the response row now has, announces it to the outbox and
 * sends its NOTIFYs, all in one statement. Called by changeStatus, and by
 * admission and a claim, which wrote the status themselves. Answers with the
 * status event's sequence.
 */
export async function journalStatus(tx: Queryable, writer: JournalWriter, row: ResponseRow, options: StatusJournalOptions = {}): Promise<number> {
  return journalStatuses(tx, writer, [row], options);
}

/** The same for several states the row went through in one transaction, in order (admission and claim at once); answers with the last one's sequence. */
export async function journalStatuses(
  tx: Queryable,
  writer: JournalWriter,
  states: readonly ResponseRow[],
  options: StatusJournalOptions = {},
): Promise<number> {
  const before = options.before ?? [];
  const events: KernelEvent[] = [...before, ...states.map((row) => statusEventOf(responseState(row)))];
  const p = new SqlParams();
  const { ctes, terms } = statusAppend(
    p,
    writer,
    events,
    states.map((row) => row.status),
    options,
  );
  const { rows } = await tx.query<{ first: number }>(`WITH ${ctes} SELECT next.first${terms} FROM next`, p.values);
  if (rows.length === 0) throw new LeaseLostError(writer.responseId);
  await verifyAppend(tx, writer.responseId, rows[0].first, events);
  return rows[0].first + events.length - 1;
}

/**
 * The CTEs and select-list terms of a statement that journals `events`, the
 * last of which are the status events of `statuses`, and announces those to the
 * outbox: `next` (the append's, or `take`'s, which must return `agent_id` too)
 * has no row when nothing may be written, and then nothing is.
 */
export function statusAppend(
  p: SqlParams,
  writer: JournalWriter,
  events: readonly KernelEvent[],
  statuses: readonly ResponseStatus[],
  options: AppendOptions & { take?: (count: string) => string } = {},
): { ctes: string; terms: string } {
  const offset = events.length - statuses.length;
  const announcements = statuses.map((status, index) =>
    announcementCte(p, {
      name: `announced_${index}`,
      projectId: writer.projectId,
      responseId: writer.responseId,
      agentIdSql: 'next.agent_id',
      status,
      sequence: `next.first + ${offset + index}`,
      from: 'next',
    }),
  );
  return {
    ctes: [appendCtes(p, writer, events, { take: options.take }), ...announcements].join(',\n     '),
    terms: statuses.map((_, index) => `, ${announcedWakes(p, `announced_${index}`)}`).join('') + appendWakes(p, writer, options),
  };
}

/** The statuses from which the table allows `to`. */
const sourcesOf = (to: ResponseStatus): ResponseStatus[] => (Object.keys(TRANSITIONS) as ResponseStatus[]).filter((from) => canTransition(from, to));

/** The UPDATE that makes the change; its parameters follow the project and response ids ($1, $2) and the writer's token ($3). */
function changeWrite(change: StatusChange): { set: string; params: unknown[] } {
  if ('status' in change) {
    const counted = change.step?.usage !== undefined;
    return {
      // status_changed_at is set here, so its trigger is not called (migration 0035).
      set: `status = $5, output = r.output || $6::jsonb, usage = COALESCE($7::jsonb, r.usage), error = $8, completed_at = now(), status_changed_at = now(),
         step_usage = r.step_usage || $9::jsonb, model_calls = r.model_calls + $10, model_attempts = r.model_attempts + $10,
         lease_owner = NULL, lease_expires_at = NULL, wake_at = NULL, lease_token = r.lease_token + 1`,
      params: [
        change.status,
        JSON.stringify(change.output),
        change.usage ? JSON.stringify(change.usage) : null,
        change.error && JSON.stringify(change.error),
        JSON.stringify(counted ? [change.step!.usage] : []),
        counted ? 1 : 0,
      ],
    };
  }
  // An API action answered the last thing the response waited for: hand it back to the workers.
  if (change.to === 'in_progress') {
    return { set: `status = $5, lease_owner = NULL, lease_expires_at = NULL, wake_at = NULL, lease_token = r.lease_token + 1`, params: [change.to] };
  }
  // Parked: no lease, and a wake-up at the earliest approval or parked call's deadline, or the response's own.
  return {
    set: `status = $5, lease_owner = NULL, lease_expires_at = NULL,
       wake_at = LEAST(r.deadline_at, (SELECT min(CASE t.status WHEN 'parked' THEN t.park_deadline ELSE t.approval_deadline END)
         FROM tool_calls t WHERE t.response_id = r.id AND t.status IN ('awaiting_approval', 'parked')))`,
    params: [change.to],
  };
}

/**
 * Makes the change in one UPDATE that holds only when the table allows it from
 * the current status and the writer's lease is current; the row it returns is
 * what the status event carries. When it does not hold, the row (locked now)
 * says why: gone, a lost lease, already ended, or a change the table forbids.
 */
export async function changeStatus(tx: Queryable, writer: JournalWriter, change: StatusChange): Promise<ResponseRow> {
  if ('status' in change) return finishResponse(tx, writer, change);
  const write = changeWrite(change);
  let after: ResponseRow | null = null;
  while (!after) {
    after = await updateResponse(tx, writer.projectId, writer.responseId, {
      set: write.set,
      where: 'r.status = ANY($4::text[]) AND ($3::integer IS NULL OR r.lease_token = $3)',
      params: [writer.leaseToken, sourcesOf(change.to), ...write.params],
    });
    if (after) break;
    await explainMiss(tx, writer, change.to);
    // It changed between the two statements; the lock is held now, so the next try holds.
  }
  // The token may have moved on with this very write: the event is written by the row lock's holder.
  await journalStatus(tx, { ...writer, leaseToken: null }, after, {
    notify: change.to === 'in_progress' ? [[WORK_CHANNEL, after.id]] : [],
  });
  return after;
}

/**
 * The end in one statement, so it needs no transaction of its own: the UPDATE
 * that writes the terminal state takes the journal's sequences too (a row is
 * updated once per statement), and the CTEs over its RETURNING write the
 * events, the session's new items (cut-off ones stay out) and the outbox
 * deliveries. Null when the UPDATE does not hold (changeStatus says why).
 *
 * The UPDATE holds only on the row version the statement's snapshot saw
 * (same xmin). A row changed while the statement waited for its lock, as a
 * subscription to this response changes it (holdStatusChanges), was changed by
 * a commit this snapshot cannot see, so neither can the announcement's read
 * of the subscriptions: the write is then made again by a statement that can.
 */
async function finishWrite(q: Queryable, writer: JournalWriter, outcome: Outcome, sessionless = false): Promise<ResponseRow | null> {
  const p = new SqlParams();
  const write = changeWrite(outcome);
  // $1–$4 and the change's $5 onwards, as changeWrite's SQL expects them.
  for (const [value, cast] of [
    [writer.projectId, 'text'],
    [writer.responseId, 'text'],
    [writer.leaseToken, 'integer'],
    [sourcesOf(outcome.status), 'text[]'],
  ] as const)
    p.add(value, cast);
  for (const value of write.params) p.add(value);
  const before = outcome.step?.events ?? [];
  const take = (count: string) => `UPDATE responses r SET ${write.set}, next_sequence = r.next_sequence + ${count} FROM agents a, agent_revisions rev
       WHERE r.project_id = $1 AND r.id = $2 AND ${RESPONSE_JOIN} AND r.status = ANY($4::text[]) AND ($3::integer IS NULL OR r.lease_token = $3)
         AND r.xmin = (SELECT s.xmin FROM responses s WHERE s.project_id = $1 AND s.id = $2)${sessionless ? ' AND r.session_id IS NULL' : ''}
       RETURNING ${RESPONSE_COLUMNS}, r.next_sequence - ${count} AS first`;
  const { ctes, terms } = statusAppend(p, writer, [...before, terminalStatusEvent(outcome.status)], [outcome.status], { take });
  // PostgreSQL sets up every CTE's writes before it runs any: a response with no session is spared the session's two.
  const session = sessionless
    ? ''
    : `,
     finished AS (
       SELECT e.item, row_number() OVER (ORDER BY e.ord) AS n
         FROM next, jsonb_array_elements(next.output) WITH ORDINALITY AS e(item, ord)
        WHERE next.session_id IS NOT NULL AND e.item->>'status' IS DISTINCT FROM 'incomplete'),
     ${sessionAppendCtes('finished', { projectId: 'next.project_id', sessionId: 'next.session_id', responseId: 'next.id', from: 'next' })}`;
  const sql = `WITH ${ctes}${session}
     SELECT ${responseColumnsOf('next')}, next.first${terms} FROM next`;
  const { rows } = await q.query<ResponseRow & { first: number }>(sql, p.values);
  if (rows.length === 0) return null;
  const { first, ...row } = rows[0];
  await verifyAppend(q, writer.responseId, first, () => [...before, statusEventOf(responseState(row))]);
  return row;
}

/**
 * Holds back the response's status changes until the caller's transaction
 * ends, and waits for one in flight (a subscription to the response is made so).
 * The row gets a new version with the same values, not just a lock: a worker's
 * end that waited for it finds the row changed since its snapshot and is made
 * again by a statement that sees what the caller wrote (finishWrite).
 */
export async function holdStatusChanges(tx: Queryable, projectId: string, responseId: string): Promise<void> {
  await tx.query('UPDATE responses SET lease_token = lease_token WHERE project_id = $1 AND id = $2', [projectId, responseId]);
}

/** Commits the terminal state, the session's new items and the one terminal event together. */
export async function finishResponse(tx: Queryable, writer: JournalWriter, outcome: Outcome): Promise<ResponseRow> {
  for (;;) {
    const after = await finishWrite(tx, writer, outcome);
    if (after) return after;
    await explainMiss(tx, writer, outcome.status);
    // It changed between the two statements; the lock is held now, so the next try holds.
  }
}

/**
 * The same outside any transaction, for a worker's end: one statement and no
 * BEGIN or COMMIT when it holds (nearly always); when it does not, the
 * transaction that says why, with the whole statement (so a `sessionless` that
 * was wrong costs a second statement, never a session's items).
 */
export async function finishAtOnce(db: Db, writer: JournalWriter, outcome: Outcome): Promise<ResponseRow> {
  return (await finishWrite(db, writer, outcome, outcome.sessionless === true)) ?? db.transaction((tx) => finishResponse(tx, writer, outcome));
}

/** Why a change's UPDATE matched nothing, with the row locked: gone or a lost lease (lockUnderLease throws), already ended, or forbidden. */
async function explainMiss(tx: Queryable, writer: JournalWriter, to: ResponseStatus): Promise<void> {
  const before = await lockUnderLease(tx, writer);
  if (isTerminal(before.status)) throw new PalaiError('conflict', `Response ${before.id} is already ${before.status}.`);
  if (!canTransition(before.status, to)) throw new IllegalTransition(before.id, before.status, to);
}

/**
 * The status the open calls imply; approval first, since nothing runs before it.
 * Only when every open call is parked on an outside party is the response
 * `parked`: anything a caller must answer makes it a wait the caller sees.
 */
export function waitingStatusFor(openCalls: Pick<ToolCallRow, 'status'>[]): SuspendedStatus | null {
  if (openCalls.some((c) => c.status === 'awaiting_approval')) return 'waiting_for_approval';
  if (openCalls.some((c) => c.status === 'awaiting_output')) return 'waiting_for_tool';
  if (openCalls.some((c) => c.status === 'awaiting_input')) return 'waiting_for_input';
  if (openCalls.some((c) => c.status === 'parked')) return 'parked';
  return null;
}
