// Triggers: what wakes an objective. A schedule is checked once, here (its cron
// and time zone by the one cron module, its interval against the configured
// minimum); its next occurrence is stored, and only the scheduler moves it on,
// so no edit pushes a due occurrence forward unseen.
import type { CreateObjectiveScheduleRequest, DeletedObjectiveTrigger, ObjectiveTrigger, ObjectiveTriggerList } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import { notifySignal } from '../../signals/signals.js';
import type { Db, Queryable } from '../../store/db.js';
import { MAX_WAKE_DELAY_SECONDS, TRIGGERS_SIGNAL, type ScheduleWakeCall } from './autonomy-port.js';
import { parseSchedule, ScheduleError, type Schedule } from './cron.js';
import { assertOpen, requireObjective } from './objectives.js';
import { triggerView, type TriggerRow } from './objective-views.js';
import { dropBuffered } from './take-occurrence.js';

const DEFAULT_CATCHUP_WINDOW_SECONDS = 86_400;
const DEFAULT_MAX_CATCH_UP = 10;

const invalid = (field: string, detail: string) =>
  new PalaiError('validation-failed', `The schedule's ${field} ${detail}.`, { errors: [{ pointer: `/${field}`, detail }] });

export async function createSchedule(
  db: Db,
  minIntervalSeconds: number,
  projectId: string,
  objectiveId: string,
  request: CreateObjectiveScheduleRequest,
): Promise<ObjectiveTrigger> {
  let schedule: Schedule;
  try {
    schedule = parseSchedule(request.cron, { timezone: request.timezone, minIntervalSeconds });
  } catch (error) {
    if (error instanceof ScheduleError)
      throw invalid(
        error.field,
        error.message.replace(/\.$/, '').replace(/^./, (c) => c.toLowerCase()),
      );
    throw error;
  }
  return db.transaction(async (tx) => {
    // The first occurrence after the store's now, as the scheduler reads the clock: a process's own clock moves nothing.
    const { rows: clock } = await tx.query<{ now: Date }>('SELECT now() AS now');
    const now = clock[0].now;
    const first = schedule.nextAfter(now);
    if (request.end_at !== undefined) {
      if (request.end_at * 1000 <= now.getTime()) throw invalid('end_at', 'is in the past');
      if (first === null || first.getTime() > request.end_at * 1000) throw invalid('end_at', 'comes before the first occurrence');
    }
    if (first === null) throw invalid('cron', 'has no occurrence after now');
    const objective = await requireObjective(tx, projectId, objectiveId, true);
    assertOpen(objective);
    const { rows } = await tx.query<TriggerRow>(
      `INSERT INTO objective_triggers (id, objective_id, project_id, kind, cron, timezone, end_at, missed_run_policy,
         catchup_window_seconds, max_catch_up, status, next_due_at)
       VALUES (palai_new_id('trg'), $1, $2, 'cron', $3, $4, CASE WHEN $5::bigint IS NULL THEN NULL ELSE to_timestamp($5::bigint) END,
         $6, $7, $8, 'enabled', $9) RETURNING *`,
      [
        objective.id,
        projectId,
        request.cron.trim(),
        request.timezone ?? 'UTC',
        request.end_at ?? null,
        request.missed_run_policy ?? 'run_once',
        request.catchup_window_seconds ?? DEFAULT_CATCHUP_WINDOW_SECONDS,
        request.max_catch_up ?? DEFAULT_MAX_CATCH_UP,
        first,
      ],
    );
    await notifySignal(tx, TRIGGERS_SIGNAL, rows[0].id);
    return triggerView(rows[0]);
  });
}

/** A schedule or a one-shot wake; its wake records stay. */
export async function deleteTrigger(db: Db, projectId: string, objectiveId: string, triggerId: string): Promise<DeletedObjectiveTrigger> {
  return db.transaction(async (tx) => {
    const objective = await requireObjective(tx, projectId, objectiveId, true);
    const { rowCount } = await tx.query("DELETE FROM objective_triggers WHERE objective_id = $1 AND id = $2 AND kind <> 'manual'", [objective.id, triggerId]);
    if (rowCount === 0) throw new PalaiError('not-found', `Objective ${objective.id} has no schedule ${JSON.stringify(triggerId)}.`);
    if (objective.buffered_trigger_id === triggerId) await dropBuffered(tx, objective, 'ended');
    return { id: triggerId, object: 'objective_trigger.deleted', deleted: true };
  });
}

export async function listTriggers(q: Queryable, projectId: string, objectiveId: string): Promise<ObjectiveTriggerList> {
  const objective = await requireObjective(q, projectId, objectiveId);
  const { rows } = await q.query<TriggerRow>('SELECT * FROM objective_triggers WHERE objective_id = $1 ORDER BY created_at, id', [objective.id]);
  return { object: 'list', data: rows.map(triggerView), has_more: false };
}

/** The objective's one manual trigger, made by its first manual wake. */
export async function manualTrigger(tx: Queryable, objectiveId: string, projectId: string): Promise<string> {
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO objective_triggers (id, objective_id, project_id, kind, missed_run_policy, catchup_window_seconds, max_catch_up, status)
     VALUES (palai_new_id('trg'), $1, $2, 'manual', 'run_once', 0, 1, 'done')
     ON CONFLICT (objective_id) WHERE kind = 'manual' DO UPDATE SET updated_at = now() RETURNING id`,
    [objectiveId, projectId],
  );
  return rows[0].id;
}

/**
 * The one-shot trigger a wake's schedule_wake call makes: keyed by the call, so
 * the call run again (after a crash) finds the trigger it made instead of a second.
 */
export async function scheduleOnce(db: Db, objectiveId: string, call: ScheduleWakeCall): Promise<ObjectiveTrigger> {
  const delay = call.afterSeconds;
  const at = call.at === undefined ? null : new Date(call.at);
  if ((delay === undefined) === (at === null)) throw new PalaiError('validation-failed', 'Give exactly one of after_seconds and at.');
  if (at !== null && Number.isNaN(at.getTime())) throw new PalaiError('validation-failed', `at ${JSON.stringify(call.at)} is not an RFC 3339 date-time.`);
  return db.transaction(async (tx) => {
    const objective = await requireObjectiveById(tx, objectiveId);
    assertOpen(objective);
    const { rows } = await tx.query<TriggerRow>(
      `WITH made AS (
         INSERT INTO objective_triggers (id, objective_id, project_id, kind, missed_run_policy, catchup_window_seconds, max_catch_up,
           status, next_due_at, reason, created_by_call)
         SELECT palai_new_id('trg'), $1, $2, 'once', 'run_once', 86400, 1, 'enabled',
           CASE WHEN $3::integer IS NULL THEN $4::timestamptz ELSE now() + make_interval(secs => $3::integer) END, $5, $6
         WHERE coalesce($4::timestamptz, now() + make_interval(secs => $3::integer)) <= now() + make_interval(secs => $7::integer)
         ON CONFLICT (created_by_call) DO NOTHING RETURNING *)
       SELECT * FROM made UNION ALL SELECT * FROM objective_triggers WHERE created_by_call = $6 AND NOT EXISTS (SELECT 1 FROM made)`,
      [objective.id, objective.project_id, delay ?? null, at, call.reason, `${call.responseId}:${call.callId}`, MAX_WAKE_DELAY_SECONDS],
    );
    if (!rows[0]) throw new PalaiError('validation-failed', `A wake may be put off at most ${MAX_WAKE_DELAY_SECONDS} seconds.`);
    await notifySignal(tx, TRIGGERS_SIGNAL, rows[0].id);
    return triggerView(rows[0]);
  });
}

async function requireObjectiveById(q: Queryable, objectiveId: string) {
  const { rows } = await q.query<{ project_id: string }>('SELECT project_id FROM objectives WHERE id = $1', [objectiveId]);
  if (!rows[0]) throw new PalaiError('not-found', `No objective ${JSON.stringify(objectiveId)}.`);
  return requireObjective(q, rows[0].project_id, objectiveId, true);
}
