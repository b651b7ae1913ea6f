// The call gate of an objective's wakes (core/tools/call-gate-port.ts): before a
// call a wake proposes is committed runnable, in the step's transaction, the
// checks run in this order and the first that fails refuses the call:
//   1. the wake: the response is a wake of this objective (its record, never
//      its metadata or options alone), and the objective exists;
//   2. the policy: the newest approved version holds (not revoked, expired);
//   3. the class is one of the policy's consequence_classes;
//   4. quiet hours (in the policy's time zone) allow only observe;
//   5. the tool is in allowed_tools / mcp_tools when those are set;
//   6. a call with a target is inside an active resource grant;
//   7. pace: burst_cap, max_concurrency, max_actions_per_period, period_limit
//      (counting allowed calls that are not observe).
// One statement reads all of it, locking the objective's row, so wakes of one
// objective take turns here and no two can both take the last slot of a
// period. Anything the gate cannot read or evaluate refuses: it fails closed.
import type { ConsequenceClass, ObjectivePace, ObjectivePolicyDocument } from '../../../generated/schemas.js';
import { TERMINAL_STATUSES } from '../../response-status.js';
import type { Queryable } from '../../store/db.js';
import type { CallGate, GateRun, GateVerdict, ProposedCall, Refusal } from '../../tools/call-gate-port.js';
import { filesystemCoverage, granted, type ActiveGrant } from './grants.js';
import { DEFAULT_PACE_PERIOD_SECONDS } from './pace.js';
import { redactedRequest } from './redact.js';
import { WAKE_TOOLS } from './wake-command.js';

interface GateRow {
  is_wake: boolean;
  trigger_id: string | null;
  due_at: Date | null;
  pace: ObjectivePace;
  /** Whether the objective has notifications: then its allowed actions are watched for an uncertain end. */
  notifies: boolean;
  db_now: Date | null;
  policy_hash: string | null;
  policy_version: number | null;
  policy_status: string | null;
  policy_document: ObjectivePolicyDocument | null;
  policy_expired: boolean | null;
  grants: ActiveGrant[];
  wake_count: string;
  in_flight: string;
  policy_count: string;
  policy_oldest: Date | null;
  pace_count: string;
  pace_oldest: Date | null;
}

const COUNTED = "a.verdict = 'allowed' AND a.class <> 'observe'";
const POLICY_PERIOD = "(p.document -> 'max_actions_per_period' ->> 'period_seconds')::integer";
const PACE_PERIOD = `coalesce((o.pace ->> 'period_seconds')::integer, ${DEFAULT_PACE_PERIOD_SECONDS})`;

const GATE_STATEMENT = `SELECT (w.response_id IS NOT NULL) AS is_wake, w.trigger_id, w.due_at, o.pace, now() AS db_now,
    coalesce(jsonb_array_length(o.notify -> 'webhook_endpoints'), 0) > 0 AS notifies,
    p.hash AS policy_hash, p.version AS policy_version, p.status AS policy_status, p.document AS policy_document,
    coalesce(p.expires_at <= now(), false) AS policy_expired,
    coalesce((SELECT jsonb_agg(jsonb_build_object('type', g.type, 'locator', g.locator, 'access_mode', g.access_mode))
      FROM objective_grants g WHERE g.objective_id = o.id AND g.revoked_at IS NULL AND (g.expires_at IS NULL OR g.expires_at > now())), '[]') AS grants,
    (SELECT count(*) FROM objective_actions a WHERE a.response_id = $2 AND ${COUNTED}) AS wake_count,
    -- Only a policy with max_concurrency pays for the in-flight count.
    CASE WHEN jsonb_typeof(p.document -> 'max_concurrency') = 'number' THEN
      (SELECT count(*) FROM objective_actions a JOIN tool_calls t ON t.response_id = a.response_id AND t.call_id = a.call_id
         JOIN responses r ON r.id = a.response_id
       WHERE a.objective_id = o.id AND ${COUNTED} AND t.status <> 'completed' AND r.status <> ALL('{${TERMINAL_STATUSES.join(',')}}'::text[]))
    ELSE 0 END AS in_flight,
    c.policy_count, c.policy_oldest, c.pace_count, c.pace_oldest
  FROM objectives o
  LEFT JOIN objective_wakes w ON w.response_id = $2 AND w.objective_id = o.id
  LEFT JOIN LATERAL (SELECT version, hash, document, status, expires_at FROM objective_policies
    WHERE objective_id = o.id AND status IN ('approved', 'revoked') ORDER BY (status = 'approved') DESC, version DESC LIMIT 1) p ON true
  LEFT JOIN LATERAL (SELECT
      count(*) FILTER (WHERE a.created_at > now() - make_interval(secs => coalesce(${POLICY_PERIOD}, 0))) AS policy_count,
      min(a.created_at) FILTER (WHERE a.created_at > now() - make_interval(secs => coalesce(${POLICY_PERIOD}, 0))) AS policy_oldest,
      count(*) FILTER (WHERE a.created_at > now() - make_interval(secs => ${PACE_PERIOD})) AS pace_count,
      min(a.created_at) FILTER (WHERE a.created_at > now() - make_interval(secs => ${PACE_PERIOD})) AS pace_oldest
    FROM objective_actions a
    WHERE a.objective_id = o.id AND ${COUNTED}
      AND a.created_at > now() - make_interval(secs => greatest(coalesce(${POLICY_PERIOD}, 0), ${PACE_PERIOD}))) c ON true
  WHERE o.id = $1 AND o.project_id = $3
  FOR UPDATE OF o`;

/** The hour of `at` in the time zone, or null when it cannot be told. */
function hourIn(at: Date, timeZone: string): number | null {
  try {
    const hour = Number(new Intl.DateTimeFormat('en-US', { timeZone, hour: 'numeric', hourCycle: 'h23' }).format(at));
    return Number.isInteger(hour) && hour >= 0 && hour < 24 ? hour : null;
  } catch {
    return null;
  }
}

/** Whether `HH-HH` covers the hour (`22-07` wraps past midnight; `07-07` is the whole day); null when it does not parse. */
export function inQuietHours(spec: string, hour: number): boolean | null {
  const match = /^([01][0-9]|2[0-3])-([01][0-9]|2[0-3])$/.exec(spec);
  if (!match) return null;
  const [start, end] = [Number(match[1]), Number(match[2])];
  if (start === end) return true;
  return start < end ? hour >= start && hour < end : hour >= start || hour < end;
}

/** Counts of the objective kept current across the calls of one step. */
interface Counts {
  wake: number;
  inFlight: number;
  policy: number;
  policyOldest: Date | null;
  pace: number;
  paceOldest: Date | null;
}

type Check = { rule: string; reason: string; resetsAt?: Date } | null;

const resetOf = (oldest: Date | null, now: Date, seconds: number): Date => new Date((oldest ?? now).getTime() + seconds * 1000);

/** Checks 3 to 7 for one call; null when it may go on. */
function check(call: ProposedCall, row: GateRow, document: ObjectivePolicyDocument, now: Date, counts: Counts): Check {
  const cls = call.consequence;
  if (!document.consequence_classes.includes(cls)) {
    return { rule: 'consequence-class', reason: `The policy allows ${document.consequence_classes.join(', ') || 'no class'}; ${call.name} is ${cls}.` };
  }
  if (document.quiet_hours != null && cls !== 'observe') {
    const timeZone = document.timezone ?? 'UTC';
    const hour = hourIn(now, timeZone);
    if (hour === null) return { rule: 'clock-unavailable', reason: `The hour in ${timeZone} cannot be told; only observe calls run.` };
    const quiet = inQuietHours(document.quiet_hours, hour);
    if (quiet === null) return { rule: 'policy-unreadable', reason: `The policy's quiet_hours ${JSON.stringify(document.quiet_hours)} do not parse.` };
    if (quiet) return { rule: 'quiet-hours', reason: `It is quiet hours (${document.quiet_hours}, ${timeZone}): only observe calls run.` };
  }
  const mcpTarget = call.kind === 'mcp' ? (call.targets.find((t) => t.type === 'mcp')?.locator ?? null) : null;
  if (mcpTarget !== null && document.mcp_tools != null) {
    if (!document.mcp_tools.includes(mcpTarget) && !(document.allowed_tools ?? []).includes(call.name)) {
      return { rule: 'mcp-tool-not-allowed', reason: `${mcpTarget} is not in the policy's mcp_tools.` };
    }
  } else if (document.allowed_tools != null && !document.allowed_tools.includes(call.name)) {
    return { rule: 'tool-not-allowed', reason: `${call.name} is not in the policy's allowed_tools.` };
  }
  const outside = call.targets.find((target) => !granted(target, cls === 'observe', row.grants));
  if (outside) {
    const at = outside.paths?.length ? ` at ${outside.paths.map((p) => JSON.stringify(p.slice(0, 200))).join(', ')}` : '';
    return { rule: 'no-grant', reason: `No active ${outside.type} grant of the objective covers ${JSON.stringify(outside.locator)}${at}.` };
  }
  if (cls === 'observe') return null;
  const pace = row.pace ?? {};
  if (pace.burst_cap != null && counts.wake >= pace.burst_cap) {
    return { rule: 'burst-cap', reason: `This wake made its ${pace.burst_cap} counted actions (the objective's burst_cap).` };
  }
  if (document.max_concurrency != null && counts.inFlight >= document.max_concurrency) {
    return {
      rule: 'max-concurrency',
      reason: `${counts.inFlight} counted actions are in flight (the policy's max_concurrency is ${document.max_concurrency}).`,
    };
  }
  const perPeriod = document.max_actions_per_period;
  if (perPeriod != null && counts.policy >= perPeriod.count) {
    const resetsAt = resetOf(counts.policyOldest, now, perPeriod.period_seconds);
    return {
      rule: 'max-actions-per-period',
      reason: `The policy allows ${perPeriod.count} counted actions per ${perPeriod.period_seconds} s; the period frees a slot at ${resetsAt.toISOString()}.`,
      resetsAt,
    };
  }
  if (pace.period_limit != null && counts.pace >= pace.period_limit) {
    const seconds = pace.period_seconds ?? DEFAULT_PACE_PERIOD_SECONDS;
    const resetsAt = resetOf(counts.paceOldest, now, seconds);
    return {
      rule: 'period-limit',
      reason: `The objective's pace allows ${pace.period_limit} counted actions per ${seconds} s; the period frees a slot at ${resetsAt.toISOString()}.`,
      resetsAt,
    };
  }
  return null;
}

/** Checks 1 and 2, for every call alike. */
function standing(row: GateRow | undefined): { rule: string; reason: string } | null {
  if (!row) return { rule: 'objective-missing', reason: 'The objective this run names does not exist in its project.' };
  if (!row.is_wake) return { rule: 'not-a-wake', reason: 'This run is no wake of the objective it names; no call of it runs.' };
  if (row.db_now === null) return { rule: 'clock-unavailable', reason: 'The store gave no time.' };
  if (row.policy_version === null || row.policy_document === null) return { rule: 'no-approved-policy', reason: 'No version of the policy is approved.' };
  if (row.policy_status === 'revoked') return { rule: 'policy-revoked', reason: `Policy version ${row.policy_version} (${row.policy_hash}) was revoked.` };
  if (row.policy_expired !== false) return { rule: 'policy-expired', reason: `Policy version ${row.policy_version} (${row.policy_hash}) expired.` };
  if (!Array.isArray(row.grants) || !Array.isArray(row.policy_document.consequence_classes)) {
    return { rule: 'policy-unreadable', reason: 'The policy or the grants could not be read.' };
  }
  return null;
}

async function decide(tx: Queryable, run: GateRun, calls: readonly ProposedCall[]): Promise<GateVerdict[]> {
  const { rows } = await tx.query<GateRow>(GATE_STATEMENT, [run.objectiveId, run.responseId, run.projectId]);
  const row = rows[0];
  const blocked = standing(row);
  const now = row?.db_now ?? new Date(0);
  const counts: Counts = {
    wake: Number(row?.wake_count ?? 0),
    inFlight: Number(row?.in_flight ?? 0),
    policy: Number(row?.policy_count ?? 0),
    policyOldest: row?.policy_oldest ?? null,
    pace: Number(row?.pace_count ?? 0),
    paceOldest: row?.pace_oldest ?? null,
  };
  return calls.map((call): GateVerdict => {
    const wakeTool = (WAKE_TOOLS as readonly string[]).includes(call.name) && call.kind !== 'unknown';
    let failed: Check = blocked;
    if (failed === null && !wakeTool) {
      try {
        failed = check(call, row!, row!.policy_document!, now, counts);
      } catch {
        failed = { rule: 'policy-unreadable', reason: 'The policy or the grants could not be evaluated.' };
      }
    }
    const refusal: Refusal | null =
      failed === null
        ? null
        : {
            refused: true,
            rule: failed.rule,
            class: call.consequence,
            policy_hash: row?.policy_hash ?? null,
            reason: failed.reason,
            ...(failed.resetsAt ? { resets_at: failed.resetsAt.toISOString() } : {}),
          };
    if (refusal === null && call.consequence !== 'observe' && !wakeTool) {
      counts.wake++;
      counts.inFlight++;
      counts.policy++;
      counts.pace++;
      counts.policyOldest ??= now;
      counts.paceOldest ??= now;
    }
    // The wake tools are the objective's own bookkeeping, and a run that is no wake has no journal to write to.
    const record = wakeTool || !row?.is_wake ? null : actionRecord(run, row, call, refusal);
    return { refusal, record, confinedTo: refusal === null && !wakeTool ? confinementOf(call, row!.grants) : null };
  });
}

/** The parts of a file profile an allowed call's filesystem grants confine it to (the node enforces them), or null. */
function confinementOf(call: ProposedCall, grants: GateRow['grants']): string[] | null {
  const target = call.targets.find((t) => t.type === 'filesystem');
  return target ? (filesystemCoverage(target, call.consequence === 'observe', grants)?.confinedTo ?? null) : null;
}

function actionRecord(run: GateRun, row: GateRow, call: ProposedCall, refusal: Refusal | null): Record<string, unknown> {
  return {
    objective_id: run.objectiveId,
    trigger_id: row.trigger_id,
    due_at: row.due_at,
    kind: call.kind,
    tool: call.name,
    // The most specific of its targets: a node call's file profile or scope over its command.
    target_type: call.targets.at(-1)?.type ?? null,
    target: call.targets.at(-1)?.locator ?? null,
    class: call.consequence satisfies ConsequenceClass,
    policy_hash: row.policy_hash,
    request: redactedRequest(call.arguments),
    verdict: refusal ? 'refused' : 'allowed',
    rule: refusal?.rule ?? null,
    reason: refusal?.reason ?? null,
    watching: refusal === null && row.notifies,
  };
}

export const objectiveCallGate: CallGate = { decide };
