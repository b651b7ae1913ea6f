// The record of an objective's wakes, and the manual wake: POST …/wake takes an
// occurrence of the objective's manual trigger, due now, through the same gates
// as a schedule, and answers with the wake as recorded.
import type { ObjectiveWake, ObjectiveWakeList } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import { reserveKey, type IdempotencyClaim } from '../../idempotency/idempotency.js';
import type { ToolEntryCheck } from '../../responses/admission-command.js';
import { notifySignal } from '../../signals/signals.js';
import type { Db, Queryable } from '../../store/db.js';
import { TRIGGERS_SIGNAL } from './autonomy-port.js';
import { assertOpen, requireObjective } from './objectives.js';
import { wakeView, type WakeRow } from './objective-views.js';
import { gateStates, takeOccurrence } from './take-occurrence.js';
import { manualTrigger } from './triggers.js';

export const MAX_WAKES_PAGE = 1000;

/** A wake's place in the list: its due time in milliseconds and its trigger (two triggers may share a due time). */
const cursorOf = (row: WakeRow): string => `${row.due_at.getTime()}:${row.trigger_id}`;

function parseCursor(cursor: string): { dueMs: number; triggerId: string } {
  const match = /^(\d{1,15}):(trg_[A-Za-z0-9]+)$/.exec(cursor);
  if (!match)
    throw new PalaiError('validation-failed', 'after is not a cursor of this list.', {
      errors: [{ pointer: '/query/after', detail: 'is not a last_id of this list' }],
    });
  return { dueMs: Number(match[1]), triggerId: match[2] };
}

export async function listWakes(q: Queryable, projectId: string, objectiveId: string, query: { limit?: number; after?: string }): Promise<ObjectiveWakeList> {
  const objective = await requireObjective(q, projectId, objectiveId);
  const limit = Math.min(query.limit ?? 100, MAX_WAKES_PAGE);
  const after = query.after === undefined ? null : parseCursor(query.after);
  const { rows } = await q.query<WakeRow>(
    `SELECT * FROM objective_wakes WHERE objective_id = $1
       AND ($2::bigint IS NULL OR (due_at, trigger_id) < ('epoch'::timestamptz + $2::bigint * interval '1 millisecond', $3::text))
     ORDER BY due_at DESC, trigger_id DESC LIMIT $4`,
    [objective.id, after?.dueMs ?? null, after?.triggerId ?? null, limit + 1],
  );
  const page = rows.slice(0, limit);
  return { object: 'list', data: page.map(wakeView), last_id: page.length > 0 ? cursorOf(page[page.length - 1]) : null, has_more: rows.length > limit };
}

/** The wake a manual wake's Idempotency-Key recorded (`<trigger>@<due ms>`). */
export async function getWake(q: Queryable, projectId: string, objectiveId: string, ref: string): Promise<ObjectiveWake> {
  const objective = await requireObjective(q, projectId, objectiveId);
  const at = ref.lastIndexOf('@');
  const { rows } = await q.query<WakeRow>(
    `SELECT * FROM objective_wakes WHERE objective_id = $1 AND trigger_id = $2 AND due_at = 'epoch'::timestamptz + $3::bigint * interval '1 millisecond'`,
    [objective.id, ref.slice(0, at), Number(ref.slice(at + 1))],
  );
  if (!rows[0]) throw new PalaiError('not-found', `Objective ${objective.id} has no wake ${JSON.stringify(ref)}.`);
  return wakeView(rows[0]);
}

export async function wakeNow(
  db: Db,
  tools: ToolEntryCheck,
  projectId: string,
  objectiveId: string,
  reason: string | undefined,
  idem?: IdempotencyClaim,
): Promise<ObjectiveWake> {
  return db.transaction(async (tx) => {
    const objective = await requireObjective(tx, projectId, objectiveId, true);
    assertOpen(objective);
    if (objective.status === 'paused') throw new PalaiError('conflict', `Objective ${objective.id} is paused; resume it before waking it.`);
    const triggerId = await manualTrigger(tx, objective.id, projectId);
    // Millisecond precision, as the inbox key and the record's key hold it.
    const { rows } = await tx.query<{ now: Date }>("SELECT date_trunc('milliseconds', now()) AS now");
    const dueAt = rows[0].now;
    await reserveKey(tx, projectId, idem, `${triggerId}@${dueAt.getTime()}`);
    const state = (await gateStates(tx, [objective.id])).get(objective.id)!;
    const trigger = { id: triggerId, kind: 'manual' as const, cron: null, timezone: null, reason: null };
    const taken = await takeOccurrence(tx, state, { trigger, dueAt, reason }, { mayBuffer: false, tools });
    await tx.query(
      `UPDATE objective_triggers SET last_fired_at = CASE WHEN $2 THEN $3 ELSE last_fired_at END,
         skipped_count = skipped_count + CASE WHEN $2 THEN 0 ELSE 1 END, last_skip_reason = CASE WHEN $2 THEN last_skip_reason ELSE $4 END,
         updated_at = now() WHERE id = $1`,
      [triggerId, taken.outcome === 'admitted', dueAt, taken.outcome === 'skipped' ? taken.reason : null],
    );
    await notifySignal(tx, TRIGGERS_SIGNAL, triggerId);
    const { rows: wake } = await tx.query<WakeRow>('SELECT * FROM objective_wakes WHERE trigger_id = $1 AND due_at = $2', [triggerId, dueAt]);
    return wakeView(wake[0]);
  });
}
