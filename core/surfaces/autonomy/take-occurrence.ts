// One occurrence through the gates, in the caller's transaction: the policy
// (no approved policy, an expired or revoked one: skipped and the objective
// blocked, before any model is called), then the pace (cooldown after a wake,
// backoff after failed ones: skipped), then overlap (a wake still running:
// skipped, or kept as the one buffered; one waiting for input: skipped). One
// that passes is admitted through the inbox, keyed by its trigger and due
// time, and recorded with its response: the key and the record's primary key
// each make a second wake for the same occurrence impossible.
import type { AgentSpecFields, WakeSkipReason } from '../../../generated/schemas.js';
import type { IdempotencyClaim } from '../../idempotency/inbox-port.js';
import { fingerprint } from '../../idempotency/idempotency.js';
import { admitWithin } from '../../responses/admission.js';
import type { ToolEntryCheck } from '../../responses/admission-command.js';
import { isTerminal, TERMINAL_STATUSES, type ResponseStatus } from '../../response-status.js';
import type { Queryable } from '../../store/db.js';
import { SCHEDULE_INBOX_SOURCE } from './autonomy-port.js';
import type { ObjectiveRow } from './objective-views.js';
import { PACE_COLUMNS, wakeDelay } from './pace.js';
import { verdictOf, type PolicyVerdict } from './policy-gate.js';
import { wakeCommand, type WakeCause } from './wake-command.js';

/** How long an occurrence's key is kept in the inbox (its wake record is kept for good). */
const WAKE_KEY_HOURS = 7 * 24;

/** An objective as the gates read it, kept current across the occurrences of one transaction. */
export interface GateState {
  objective: ObjectiveRow;
  verdict: PolicyVerdict;
  /** The status of a wake of the objective that has not ended, one waiting for input first (null: none). */
  lastWakeStatus: ResponseStatus | null;
  /** The agent's current tools, or null when the agent is gone. */
  agentTools: AgentSpecFields['tools'] | null;
  agentExists: boolean;
}

export type Taken =
  | { outcome: 'admitted'; responseId: string }
  | { outcome: 'skipped'; reason: WakeSkipReason }
  | { outcome: 'buffered' }
  /** Not taken yet: the agent's one-shot wake waits for the wake still running, and is taken after it. */
  | { outcome: 'deferred' };

/** How many of an objective's newest admitted wakes the overlap gate looks at (catch-up admits up to 100 at once). */
const OPEN_WAKES_LOOKED_AT = 101;

const GATE_SELECT = `SELECT o.*, ap.version AS policy_version, ap.hash AS policy_hash, ap.expires_at AS policy_expires_at,
    (SELECT r.status FROM (SELECT w.response_id FROM objective_wakes w WHERE w.objective_id = o.id AND w.outcome = 'admitted'
        ORDER BY w.due_at DESC LIMIT ${OPEN_WAKES_LOOKED_AT}) w
      JOIN responses r ON r.id = w.response_id WHERE r.status <> ALL('{${TERMINAL_STATUSES.join(',')}}'::text[])
      ORDER BY (r.status = 'waiting_for_input') DESC LIMIT 1) AS last_wake_status,
    rev.spec -> 'tools' AS agent_tools, (a.id IS NOT NULL) AS agent_exists,
    g.version AS gate_version, g.hash AS gate_hash, g.document AS gate_document, g.status AS gate_status,
    g.expires_at AS gate_expires_at, coalesce(g.expires_at <= now(), false) AS gate_expired, ${PACE_COLUMNS}
  FROM objectives o
  LEFT JOIN objective_policies ap ON ap.objective_id = o.id AND ap.status = 'approved'
  LEFT JOIN agents a ON a.id = o.agent_id
  LEFT JOIN agent_revisions rev ON rev.agent_id = a.id AND rev.revision = a.current_revision
  LEFT JOIN LATERAL (SELECT version, hash, document, status, expires_at FROM objective_policies
    WHERE objective_id = o.id AND status IN ('approved', 'revoked') ORDER BY (status = 'approved') DESC, version DESC LIMIT 1) g ON true`;

interface GateRow extends ObjectiveRow {
  last_wake_status: ResponseStatus | null;
  agent_tools: AgentSpecFields['tools'] | null;
  agent_exists: boolean;
  gate_version: number | null;
  gate_hash: string;
  gate_document: never;
  gate_status: string;
  gate_expires_at: Date | null;
  gate_expired: boolean;
}

/** The gate state of objectives the caller has locked. */
export async function gateStates(tx: Queryable, objectiveIds: string[]): Promise<Map<string, GateState>> {
  const { rows } = await tx.query<GateRow>(`${GATE_SELECT} WHERE o.id = ANY($1::text[])`, [objectiveIds]);
  return new Map(
    rows.map((row) => [
      row.id,
      {
        objective: row,
        verdict: verdictOf(
          row.gate_version === null
            ? undefined
            : {
                version: row.gate_version,
                hash: row.gate_hash,
                document: row.gate_document,
                status: row.gate_status,
                expires_at: row.gate_expires_at,
                expired: row.gate_expired,
              },
        ),
        lastWakeStatus: row.last_wake_status,
        agentTools: row.agent_tools,
        agentExists: row.agent_exists,
      },
    ]),
  );
}

const AGENT_GONE = "agent-unavailable: the objective's agent no longer exists.";

/** Blocks the objective with `reason` (once: an objective already blocked for it is left alone). */
async function block(tx: Queryable, state: GateState, reason: string): Promise<void> {
  if (state.objective.status === 'blocked' && state.objective.blocked_reason === reason) return;
  await tx.query("UPDATE objectives SET status = 'blocked', blocked_reason = $2, updated_at = now() WHERE id = $1", [state.objective.id, reason]);
  state.objective = { ...state.objective, status: 'blocked', blocked_reason: reason };
}

export async function recordSkips(tx: Queryable, objectiveId: string, triggerId: string, skips: { dueAt: Date; reason: WakeSkipReason }[]): Promise<void> {
  if (skips.length === 0) return;
  await tx.query(
    `INSERT INTO objective_wakes (trigger_id, due_at, objective_id, outcome, reason)
     SELECT $1, d, $2, 'skipped', r FROM unnest($3::timestamptz[], $4::text[]) AS s(d, r) ON CONFLICT DO NOTHING`,
    [triggerId, objectiveId, skips.map((s) => s.dueAt), skips.map((s) => s.reason)],
  );
}

/**
 * Gives up the occurrence an objective buffered (it is paused or ended, or the
 * trigger deleted): recorded skipped with the reason, never silently dropped.
 */
export async function dropBuffered(
  tx: Queryable,
  objective: Pick<ObjectiveRow, 'id' | 'buffered_trigger_id' | 'buffered_due_at'>,
  reason: WakeSkipReason,
): Promise<void> {
  if (objective.buffered_trigger_id === null || objective.buffered_due_at === null) return;
  await recordSkips(tx, objective.id, objective.buffered_trigger_id, [{ dueAt: objective.buffered_due_at, reason }]);
  await tx.query('UPDATE objectives SET buffered_trigger_id = NULL, buffered_due_at = NULL WHERE id = $1', [objective.id]);
}

export interface TakeOptions {
  /** The tool registry, which checks the entries a wake adds (the wake tools). */
  tools: ToolEntryCheck;
  /** Fired as a missed run: admitted even while an earlier wake of the same pass runs. */
  catchUp?: boolean;
  /** A wake still running may buffer this one (overlap buffer_one); false for manual wakes. */
  mayBuffer?: boolean;
  /** Admitted in this pass already: the wake it must not overlap is one this pass made. */
  admittedThisPass?: boolean;
  /** A wake still running defers this one instead of skipping it (the agent asked to come back: it must). */
  deferWhileRunning?: boolean;
  /** Where a skip goes for the caller to record with the trigger's others, in one statement; absent, it is recorded at once. */
  skips?: { dueAt: Date; reason: WakeSkipReason }[];
}

/** Gates, then admits or records one occurrence; `state` is updated for the next one. */
export async function takeOccurrence(tx: Queryable, state: GateState, cause: WakeCause, options: TakeOptions): Promise<Taken> {
  const { objective } = state;
  const skip = async (reason: WakeSkipReason): Promise<Taken> => {
    if (options.skips) options.skips.push({ dueAt: cause.dueAt, reason });
    else await recordSkips(tx, objective.id, cause.trigger.id, [{ dueAt: cause.dueAt, reason }]);
    return { outcome: 'skipped', reason };
  };
  if ('skip' in state.verdict) {
    await block(tx, state, state.verdict.reason);
    return skip(state.verdict.skip);
  }
  if (!state.agentExists) {
    await block(tx, state, AGENT_GONE);
    return skip('agent-unavailable');
  }
  // The pace puts off the next wake after one (cooldown) or after failed ones (backoff).
  const delay = wakeDelay(objective);
  if (delay) return skip(delay.reason);
  const running = state.lastWakeStatus !== null && !isTerminal(state.lastWakeStatus);
  if (running && !(options.catchUp && options.admittedThisPass)) {
    if (options.deferWhileRunning) return { outcome: 'deferred' };
    if (state.lastWakeStatus === 'waiting_for_input') return skip('waiting-for-input');
    if (options.mayBuffer !== false && objective.overlap === 'buffer_one' && objective.buffered_due_at === null) {
      await tx.query('UPDATE objectives SET buffered_trigger_id = $2, buffered_due_at = $3 WHERE id = $1', [objective.id, cause.trigger.id, cause.dueAt]);
      state.objective = { ...objective, buffered_trigger_id: cause.trigger.id, buffered_due_at: cause.dueAt };
      return { outcome: 'buffered' };
    }
    return skip('overlap');
  }
  const key = `${cause.trigger.id}@${cause.dueAt.getTime()}`;
  const claim: IdempotencyClaim = {
    source: SCHEDULE_INBOX_SOURCE,
    key,
    operation: 'objectiveWake',
    fingerprint: fingerprint('objectiveWake', {}, { key }),
    retentionHours: WAKE_KEY_HOURS,
  };
  const row = await admitWithin(tx, objective.project_id, wakeCommand(objective, state.verdict.policy, cause, state.agentTools), claim, options.tools);
  await tx.query(`INSERT INTO objective_wakes (trigger_id, due_at, objective_id, outcome, response_id) VALUES ($1, $2, $3, 'admitted', $4)`, [
    cause.trigger.id,
    cause.dueAt,
    objective.id,
    row.id,
  ]);
  const sessionId = objective.session_mode === 'objective' ? (objective.session_id ?? row.session_id) : objective.session_id;
  await tx.query(
    `UPDATE objectives SET last_wake_response_id = $2, session_id = $3, status = 'active', blocked_reason = NULL, updated_at = now() WHERE id = $1`,
    [objective.id, row.id, sessionId],
  );
  state.objective = {
    ...objective,
    last_wake_response_id: row.id,
    session_id: sessionId,
    status: 'active',
    blocked_reason: null,
    pace_last_wake_at: objective.pace_now,
  };
  state.lastWakeStatus = row.status;
  return { outcome: 'admitted', responseId: row.id };
}
