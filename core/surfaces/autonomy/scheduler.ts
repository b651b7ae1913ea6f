// The scheduler's tick, run by every worker process: due triggers are claimed
// with FOR UPDATE SKIP LOCKED (with their objectives, so two processes never
// gate one objective at once), each occurrence goes through the missed-run
// policy and the gates, and the wakes, their records and each trigger's next
// due time commit in one transaction. A process killed before the commit
// leaves the triggers due for the next tick anywhere; "now" is the store's
// clock, and next_due_at only moves forward, so a clock stepping back in a
// process cannot make an occurrence due twice.
import type { WakeSkipReason } from '../../../generated/schemas.js';
import { isOutage, isPalaiError, retryOf, type PalaiError } from '../../errors/palai-error.js';
import type { ToolEntryCheck } from '../../responses/admission-command.js';
import type { Db, Queryable } from '../../store/db.js';
import type { TickOutcome } from './autonomy-port.js';
import type { TriggerRow } from './objective-views.js';
import { planTrigger } from './occurrences.js';
import { gateStates, recordSkips, takeOccurrence, type GateState, type Taken } from './take-occurrence.js';

export interface TickOptions {
  /** How late an occurrence may be taken and still be on time (PALAI_SCHEDULE_GRACE_SECONDS). */
  graceSeconds: number;
  /** The most triggers one transaction takes. */
  batch: number;
  tools: ToolEntryCheck;
}

type Claimed = TriggerRow & { db_now: Date };

/**
 * Objectives whose occurrences are taken: active ones, and blocked ones (their
 * skips are recorded and a policy approved later lets them run) — except one
 * blocked because the kernel refused its wake for good: it waits for a person,
 * like a paused one, and takes what it missed under the missed-run policies.
 */
const MAY_WAKE = `o.status IN ('active', 'blocked') AND NOT (o.status = 'blocked' AND o.blocked_reason LIKE 'admission-refused:%')`;

/** Due triggers of objectives that may wake (active, or blocked: its skips are recorded), oldest due first. */
const CLAIM_DUE = `SELECT t.*, now() AS db_now FROM objective_triggers t JOIN objectives o ON o.id = t.objective_id
  WHERE t.status = 'enabled' AND t.next_due_at <= now() AND ${MAY_WAKE}
  ORDER BY t.next_due_at LIMIT $1 FOR UPDATE OF t, o SKIP LOCKED`;

/** Objectives holding a buffered occurrence whose running wake has ended. */
const CLAIM_BUFFERED = `SELECT o.id, o.buffered_trigger_id, o.buffered_due_at FROM objectives o
  LEFT JOIN responses r ON r.id = o.last_wake_response_id
  WHERE o.buffered_due_at IS NOT NULL AND ${MAY_WAKE}
    AND (r.id IS NULL OR r.status IN ('completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded'))
  ORDER BY o.buffered_due_at LIMIT $1 FOR UPDATE OF o SKIP LOCKED`;

interface Tally {
  admitted: number;
  skipped: Partial<Record<WakeSkipReason, number>>;
  lagsMs: number[];
}

function count(tally: Tally, taken: Taken, dueAt: Date, now: Date): void {
  if (taken.outcome === 'admitted') {
    tally.admitted++;
    tally.lagsMs.push(Math.max(0, now.getTime() - dueAt.getTime()));
  } else if (taken.outcome === 'skipped') tally.skipped[taken.reason] = (tally.skipped[taken.reason] ?? 0) + 1;
}

async function takeTrigger(tx: Queryable, trigger: Claimed, state: GateState, options: TickOptions, tally: Tally): Promise<void> {
  const now = trigger.db_now;
  const plan = planTrigger(trigger, now, options.graceSeconds);
  for (const s of plan.skip) tally.skipped[s.reason] = (tally.skipped[s.reason] ?? 0) + 1;
  // Every skip of this trigger, the missed and those the gates make, recorded by one statement at the end.
  const skips = [...plan.skip];
  let lastFired: Date | null = null;
  let lastSkip: WakeSkipReason | null = plan.skip.at(-1)?.reason ?? null;
  let skipped = plan.skip.length;
  let admittedThisPass = false;
  let next = plan.next;
  let caught = 0;
  for (const occurrence of plan.fire) {
    const taken = await takeOccurrence(
      tx,
      state,
      { trigger, dueAt: occurrence.dueAt },
      { catchUp: occurrence.catchUp, admittedThisPass, deferWhileRunning: trigger.kind === 'once', tools: options.tools, skips },
    );
    count(tally, taken, occurrence.dueAt, new Date());
    // A one-shot wake deferred stays due: a later tick takes it once the running wake ends.
    if (taken.outcome === 'deferred') next = occurrence.dueAt;
    else if (occurrence.catchUp && trigger.missed_run_policy === 'catch_up') caught++;
    if (taken.outcome === 'admitted') {
      lastFired = occurrence.dueAt;
      admittedThisPass = true;
    } else if (taken.outcome === 'skipped') {
      skipped++;
      lastSkip = taken.reason;
    }
  }
  await recordSkips(tx, trigger.objective_id, trigger.id, skips);
  await tx.query(
    `UPDATE objective_triggers SET next_due_at = $2, status = CASE WHEN $2::timestamptz IS NULL THEN 'done' ELSE status END,
       last_fired_at = coalesce($3, last_fired_at), skipped_count = skipped_count + $4,
       last_skip_reason = coalesce($5, last_skip_reason), caught_up = CASE WHEN $6 THEN caught_up + $7 ELSE 0 END, updated_at = now()
     WHERE id = $1`,
    [trigger.id, next, lastFired, skipped, lastSkip, plan.more, caught],
  );
}

/** What one transaction takes: everything due (up to the batch), or one trigger, or one buffered occurrence. */
type Scope = { all: true } | { trigger: string } | { buffered: string };

/** One transaction: due triggers and buffered occurrences in `scope`, taken. */
async function tickOnce(db: Db, options: TickOptions, tally: Tally, scope: Scope): Promise<{ claimed: number; more: boolean }> {
  return db.transaction(async (tx) => {
    const { rows: triggers } =
      'buffered' in scope
        ? { rows: [] as Claimed[] }
        : 'trigger' in scope
          ? await tx.query<Claimed>(CLAIM_DUE.replace('WHERE t.status', 'WHERE t.id = $2 AND t.status'), [1, scope.trigger])
          : await tx.query<Claimed>(CLAIM_DUE, [options.batch]);
    const { rows: buffered } =
      'trigger' in scope
        ? { rows: [] as BufferedRow[] }
        : 'buffered' in scope
          ? await tx.query<BufferedRow>(CLAIM_BUFFERED.replace('WHERE o.buffered_due_at', 'WHERE o.id = $2 AND o.buffered_due_at'), [1, scope.buffered])
          : await tx.query<BufferedRow>(CLAIM_BUFFERED, [options.batch]);
    if (triggers.length === 0 && buffered.length === 0) return { claimed: 0, more: false };
    const states = await gateStates(tx, [...new Set([...triggers.map((t) => t.objective_id), ...buffered.map((b) => b.id)])]);
    for (const b of buffered) {
      const state = states.get(b.id);
      if (state) await takeBuffered(tx, b, state, options.tools, tally);
    }
    for (const trigger of triggers) {
      const state = states.get(trigger.objective_id);
      if (state) await takeTrigger(tx, trigger, state, options, tally);
    }
    return { claimed: triggers.length + buffered.length, more: triggers.length === options.batch || buffered.length === options.batch };
  });
}

interface BufferedRow {
  id: string;
  buffered_trigger_id: string;
  buffered_due_at: Date;
}

async function takeBuffered(tx: Queryable, b: BufferedRow, state: GateState, tools: ToolEntryCheck, tally: Tally): Promise<void> {
  await tx.query('UPDATE objectives SET buffered_trigger_id = NULL, buffered_due_at = NULL WHERE id = $1', [b.id]);
  state.objective = { ...state.objective, buffered_trigger_id: null, buffered_due_at: null };
  const { rows } = await tx.query<TriggerRow>('SELECT * FROM objective_triggers WHERE id = $1', [b.buffered_trigger_id]);
  if (!rows[0]) return;
  count(tally, await takeOccurrence(tx, state, { trigger: rows[0], dueAt: b.buffered_due_at }, { mayBuffer: false, tools }), b.buffered_due_at, new Date());
}

/**
 * A trigger or buffered occurrence whose admission the kernel refuses for good
 * (its session was deleted, say): its due occurrences are recorded skipped
 * `admission-refused` and the objective blocked with the kernel's reason, so it
 * does not fail again at every tick.
 */
async function refuse(db: Db, scope: Scope, error: PalaiError, graceSeconds: number, tally: Tally): Promise<void> {
  await db.transaction(async (tx) => {
    const reason = `admission-refused: ${error.message}`;
    let objectiveId: string | null = null;
    if ('trigger' in scope) {
      const { rows } = await tx.query<Claimed>(CLAIM_DUE.replace('WHERE t.status', 'WHERE t.id = $2 AND t.status'), [1, scope.trigger]);
      const trigger = rows[0];
      if (!trigger) return;
      objectiveId = trigger.objective_id;
      const plan = planTrigger(trigger, trigger.db_now, graceSeconds);
      const skips = [...plan.skip, ...plan.fire.map((f) => ({ dueAt: f.dueAt, reason: 'admission-refused' as const }))];
      await recordSkips(tx, trigger.objective_id, trigger.id, skips);
      for (const s of skips) tally.skipped[s.reason] = (tally.skipped[s.reason] ?? 0) + 1;
      await tx.query(
        `UPDATE objective_triggers SET next_due_at = $2, status = CASE WHEN $2::timestamptz IS NULL THEN 'done' ELSE status END,
           skipped_count = skipped_count + $3, last_skip_reason = 'admission-refused', updated_at = now() WHERE id = $1`,
        [trigger.id, plan.next, skips.length],
      );
    } else if ('buffered' in scope) {
      const { rows } = await tx.query<BufferedRow>(CLAIM_BUFFERED.replace('WHERE o.buffered_due_at', 'WHERE o.id = $2 AND o.buffered_due_at'), [
        1,
        scope.buffered,
      ]);
      if (!rows[0]) return;
      objectiveId = rows[0].id;
      await recordSkips(tx, rows[0].id, rows[0].buffered_trigger_id, [{ dueAt: rows[0].buffered_due_at, reason: 'admission-refused' }]);
      await tx.query('UPDATE objectives SET buffered_trigger_id = NULL, buffered_due_at = NULL WHERE id = $1', [rows[0].id]);
      tally.skipped['admission-refused'] = (tally.skipped['admission-refused'] ?? 0) + 1;
    }
    if (objectiveId !== null) {
      await tx.query("UPDATE objectives SET status = 'blocked', blocked_reason = $2, updated_at = now() WHERE id = $1 AND status = 'active'", [
        objectiveId,
        reason,
      ]);
    }
  });
}

const DUE_IDS = `SELECT * FROM (
    SELECT 'trigger' AS kind, t.id, t.next_due_at AS due FROM objective_triggers t JOIN objectives o ON o.id = t.objective_id
      WHERE t.status = 'enabled' AND t.next_due_at <= now() AND ${MAY_WAKE}
    UNION ALL SELECT 'buffered', o.id, o.buffered_due_at FROM objectives o WHERE o.buffered_due_at IS NOT NULL AND ${MAY_WAKE}
  ) due ORDER BY due LIMIT $1`;

/**
 * One tick. A batch that fails rolls back whole; what it held is then taken one
 * trigger (or buffered occurrence) per transaction, so one that cannot be taken
 * never holds the others back, and one the kernel refuses for good is recorded so.
 */
export async function tick(db: Db, options: TickOptions): Promise<TickOutcome> {
  const tally: Tally = { admitted: 0, skipped: {}, lagsMs: [] };
  try {
    const { claimed, more } = await tickOnce(db, options, tally, { all: true });
    return { claimed, admitted: tally.admitted, skipped: tally.skipped, transactions: 1, lagsMs: tally.lagsMs, more };
  } catch (batchError) {
    if (isPalaiError(batchError) && isOutage(batchError)) throw batchError;
    const { rows } = await db.query<{ kind: 'trigger' | 'buffered'; id: string }>(DUE_IDS, [options.batch]);
    const retry: Tally = { admitted: 0, skipped: {}, lagsMs: [] };
    let claimed = 0;
    let transactions = 1;
    let failure: unknown = null;
    for (const { kind, id } of rows) {
      const scope: Scope = kind === 'trigger' ? { trigger: id } : { buffered: id };
      transactions++;
      try {
        claimed += (await tickOnce(db, options, retry, scope)).claimed;
      } catch (error) {
        if (isPalaiError(error) && retryOf(error) !== 'later') {
          transactions++;
          await refuse(db, scope, error, options.graceSeconds, retry);
        } else {
          // Passing, or unexpected: the others go on, and this one is tried again next tick.
          failure ??= error;
        }
      }
    }
    // Nothing could be taken at all (the store is down, say): the tick failed.
    if (claimed === 0 && failure !== null) throw failure;
    return { claimed, admitted: retry.admitted, skipped: retry.skipped, transactions, lagsMs: retry.lagsMs, more: false };
  }
}
