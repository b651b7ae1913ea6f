// Rows of the autonomy tables and their API views.
import type {
  Objective,
  ObjectiveNotify,
  ObjectivePace,
  ObjectivePolicy,
  ObjectivePolicyDocument,
  ObjectiveTrigger,
  ObjectiveWake,
  WakeSkipReason,
} from '../../../generated/schemas.js';
import { unixSeconds } from '../../json.js';
import { PACE_COLUMNS, PACE_COUNT_COLUMN, paceState } from './pace.js';

export interface ObjectiveRow {
  id: string;
  project_id: string;
  agent_id: string;
  description: string;
  success_criteria: string | null;
  priority: number;
  review_at: Date | null;
  session_id: string | null;
  session_mode: Objective['session_mode'];
  overlap: Objective['overlap'];
  status: Objective['status'];
  blocked_reason: string | null;
  metadata: Record<string, string>;
  last_wake_response_id: string | null;
  buffered_trigger_id: string | null;
  buffered_due_at: Date | null;
  completed_evidence: string | null;
  created_at: Date;
  updated_at: Date;
  /** The approved policy, joined. */
  policy_version: number | null;
  policy_hash: string | null;
  policy_expires_at: Date | null;
  /** The pace (pace.ts), with what its state is computed from. */
  pace: ObjectivePace;
  notify: ObjectiveNotify;
  pace_now: Date;
  pace_last_wake_at: Date | null;
  pace_recent_wakes: { status: string; at: string }[] | null;
  pace_count: { count: number; oldest: string | null };
}

/** An objective with its approved policy (if any) and its pace: what every read of one selects. */
export const SELECT_OBJECTIVE = `SELECT o.*, p.version AS policy_version, p.hash AS policy_hash, p.expires_at AS policy_expires_at,
    ${PACE_COLUMNS}, ${PACE_COUNT_COLUMN}
  FROM objectives o LEFT JOIN objective_policies p ON p.objective_id = o.id AND p.status = 'approved'`;

export function objectiveView(row: ObjectiveRow): Objective {
  return {
    id: row.id,
    object: 'objective',
    agent_id: row.agent_id,
    description: row.description,
    success_criteria: row.success_criteria,
    priority: row.priority,
    review_at: unixSeconds(row.review_at),
    session_id: row.session_id,
    session_mode: row.session_mode,
    overlap: row.overlap,
    status: row.status,
    blocked_reason: row.blocked_reason,
    policy: row.policy_version === null ? null : { version: row.policy_version, hash: row.policy_hash ?? '', expires_at: unixSeconds(row.policy_expires_at) },
    last_wake_response_id: row.last_wake_response_id,
    completed_evidence: row.completed_evidence,
    pace: row.pace,
    pace_state: paceState(row),
    notify: row.notify,
    metadata: row.metadata,
    created_at: unixSeconds(row.created_at) ?? 0,
    updated_at: unixSeconds(row.updated_at) ?? 0,
  };
}

export interface PolicyRow {
  objective_id: string;
  version: number;
  document: ObjectivePolicyDocument;
  hash: string;
  status: ObjectivePolicy['status'];
  expires_at: Date | null;
  created_at: Date;
  approved_at: Date | null;
  revoked_at: Date | null;
}

export function policyView(row: PolicyRow): ObjectivePolicy {
  return {
    object: 'objective_policy',
    objective_id: row.objective_id,
    version: row.version,
    hash: row.hash,
    status: row.status,
    document: row.document,
    created_at: unixSeconds(row.created_at) ?? 0,
    approved_at: unixSeconds(row.approved_at),
    revoked_at: unixSeconds(row.revoked_at),
    expires_at: unixSeconds(row.expires_at),
  };
}

export interface TriggerRow {
  id: string;
  objective_id: string;
  project_id: string;
  kind: ObjectiveTrigger['kind'];
  cron: string | null;
  timezone: string | null;
  end_at: Date | null;
  missed_run_policy: ObjectiveTrigger['missed_run_policy'];
  catchup_window_seconds: number;
  max_catch_up: number;
  status: ObjectiveTrigger['status'];
  next_due_at: Date | null;
  last_fired_at: Date | null;
  skipped_count: string | number;
  caught_up: number;
  last_skip_reason: WakeSkipReason | null;
  reason: string | null;
  created_by_call: string | null;
  created_at: Date;
}

export function triggerView(row: TriggerRow): ObjectiveTrigger {
  return {
    id: row.id,
    object: 'objective_trigger',
    objective_id: row.objective_id,
    kind: row.kind,
    cron: row.cron,
    timezone: row.timezone,
    end_at: unixSeconds(row.end_at),
    missed_run_policy: row.missed_run_policy,
    catchup_window_seconds: row.catchup_window_seconds,
    max_catch_up: row.max_catch_up,
    status: row.status,
    next_due_at: unixSeconds(row.next_due_at),
    last_fired_at: unixSeconds(row.last_fired_at),
    skipped_count: Number(row.skipped_count),
    last_skip_reason: row.last_skip_reason,
    reason: row.reason,
    created_at: unixSeconds(row.created_at) ?? 0,
  };
}

export interface WakeRow {
  trigger_id: string;
  due_at: Date;
  objective_id: string;
  outcome: ObjectiveWake['outcome'];
  reason: WakeSkipReason | null;
  response_id: string | null;
  created_at: Date;
}

export function wakeView(row: WakeRow): ObjectiveWake {
  return {
    object: 'objective_wake',
    trigger_id: row.trigger_id,
    due_at: unixSeconds(row.due_at) ?? 0,
    outcome: row.outcome,
    reason: row.reason,
    response_id: row.response_id,
    created_at: unixSeconds(row.created_at) ?? 0,
  };
}
