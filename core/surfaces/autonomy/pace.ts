// An objective's pace: its own limits (burst_cap per wake, period_limit per
// period_seconds) counted by the call gate, and cooldown and backoff, which
// put off the next wake (a skipped occurrence, `cooldown` or `backoff`). The
// state is read with the objective and shown on it.
import type { ObjectivePace, ObjectivePaceState } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import { unixSeconds } from '../../json.js';

export const DEFAULT_PACE_PERIOD_SECONDS = 3600;
/** The newest ended wakes the backoff looks at: a longer streak of failures backs off as much as this one. */
export const BACKOFF_WAKES_LOOKED_AT = 32;
/** What a wake that ends so counts as failed for the backoff. */
export const FAILED_WAKE_STATUSES = ['failed', 'timed_out'] as const;

/** The columns the pace needs, selected beside the objective `o`. */
export const PACE_COLUMNS = `now() AS pace_now,
    (SELECT created_at FROM responses WHERE id = o.last_wake_response_id) AS pace_last_wake_at,
    CASE WHEN o.pace ? 'base_backoff' THEN (SELECT coalesce(jsonb_agg(jsonb_build_object('status', x.status, 'at', x.completed_at) ORDER BY x.due_at DESC), '[]')
      FROM (SELECT r.status, r.completed_at, w.due_at FROM objective_wakes w JOIN responses r ON r.id = w.response_id
            WHERE w.objective_id = o.id AND w.outcome = 'admitted' AND r.completed_at IS NOT NULL
            ORDER BY w.due_at DESC LIMIT ${BACKOFF_WAKES_LOOKED_AT}) x) END AS pace_recent_wakes`;

/** The counted actions in the pace period, for the objective's view. */
export const PACE_COUNT_COLUMN = `(SELECT jsonb_build_object('count', count(*), 'oldest', min(a.created_at)) FROM objective_actions a
      WHERE a.objective_id = o.id AND a.verdict = 'allowed' AND a.class <> 'observe'
        AND a.created_at > now() - make_interval(secs => coalesce((o.pace ->> 'period_seconds')::integer, ${DEFAULT_PACE_PERIOD_SECONDS}))) AS pace_count`;

export interface PaceColumns {
  pace: ObjectivePace;
  pace_now: Date;
  pace_last_wake_at: Date | null;
  pace_recent_wakes: { status: string; at: string }[] | null;
}

/** Wakes that ended failed since the newest one that did not, and when the last of them ended. */
function failureStreak(recent: PaceColumns['pace_recent_wakes']): { count: number; lastAt: Date | null } {
  let count = 0;
  for (const wake of recent ?? []) {
    if (!(FAILED_WAKE_STATUSES as readonly string[]).includes(wake.status)) break;
    count++;
  }
  return { count, lastAt: count > 0 ? new Date(recent![0].at) : null };
}

/** What puts off the next wake, and until when; null when nothing does now. */
export function wakeDelay(row: PaceColumns): { reason: 'cooldown' | 'backoff'; until: Date } | null {
  const { pace } = row;
  const now = row.pace_now.getTime();
  const candidates: { reason: 'cooldown' | 'backoff'; until: Date }[] = [];
  if (pace.minimum_cooldown != null && row.pace_last_wake_at !== null) {
    candidates.push({ reason: 'cooldown', until: new Date(row.pace_last_wake_at.getTime() + pace.minimum_cooldown * 1000) });
  }
  const streak = failureStreak(row.pace_recent_wakes);
  if (pace.base_backoff != null && streak.lastAt !== null) {
    const seconds = Math.min(pace.max_backoff ?? Number.MAX_SAFE_INTEGER, pace.base_backoff * 2 ** Math.min(streak.count - 1, 40));
    candidates.push({ reason: 'backoff', until: new Date(streak.lastAt.getTime() + seconds * 1000) });
  }
  const later = candidates.filter((c) => c.until.getTime() > now).sort((a, b) => b.until.getTime() - a.until.getTime());
  return later[0] ?? null;
}

export function paceState(row: PaceColumns & { pace_count: { count: number; oldest: string | null } }): ObjectivePaceState {
  const period = row.pace.period_seconds ?? DEFAULT_PACE_PERIOD_SECONDS;
  const oldest = row.pace_count.oldest ? new Date(row.pace_count.oldest) : null;
  return {
    actions_in_period: Number(row.pace_count.count),
    period_resets_at: oldest ? unixSeconds(new Date(oldest.getTime() + period * 1000)) : null,
    failed_wakes: failureStreak(row.pace_recent_wakes).count,
    next_wake_not_before: unixSeconds(wakeDelay(row)?.until ?? null),
  };
}

/** The pace as stored: what the schema cannot say checked, the period filled in. */
export function checkPace(pace: Partial<ObjectivePace>, pointer = '/pace'): ObjectivePace {
  if (pace.base_backoff != null && pace.max_backoff != null && pace.max_backoff < pace.base_backoff) {
    const detail = 'is smaller than base_backoff';
    throw new PalaiError('validation-failed', `The pace is not valid: max_backoff ${detail}.`, { errors: [{ pointer: `${pointer}/max_backoff`, detail }] });
  }
  return { ...pace, period_seconds: pace.period_seconds ?? DEFAULT_PACE_PERIOD_SECONDS };
}
