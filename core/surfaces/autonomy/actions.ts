// The action journal: one row per gated call of a wake, written with the call
// (action-gate.ts). Its status is derived from the call as it goes, at read
// time, so following it costs the call path nothing:
//   refused by the gate, an approval denied, never run when its wake ended → cancelled
//   awaiting approval → planned;  ready → reserved;  running, parked → running
//   ended → succeeded | failed | uncertain (it may have acted and is not run
//   again: an interrupted non-idempotent MCP call, a node invocation that
//   ended unknown, a parked call whose deadline passed, a call left running
//   when its wake ended);  a person settles an uncertain one, once.
import type {
  ConsequenceClass,
  ObjectiveAction,
  ObjectiveActionList,
  ObjectiveActionStatus,
  ResolveObjectiveActionRequest,
} from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import { unixSeconds } from '../../json.js';
import { TERMINAL_STATUSES } from '../../response-status.js';
import type { Db, Queryable } from '../../store/db.js';
import { requireObjective } from './objectives.js';

const TERMINAL = `'{${TERMINAL_STATUSES.join(',')}}'::text[]`;

/** The status of an action `a`, its call `t` and its wake `r`. */
export const ACTION_STATUS = `CASE
    WHEN a.verdict = 'refused' THEN 'cancelled'
    WHEN a.resolved_status IS NOT NULL THEN a.resolved_status
    WHEN t.call_id IS NULL THEN 'uncertain'
    WHEN t.status = 'completed' THEN CASE
      WHEN t.decision ->> 'decision' = 'deny' THEN 'cancelled'
      WHEN t.outcome IS NOT NULL THEN t.outcome
      WHEN t.park_ended = 'timed_out' THEN 'uncertain'
      ELSE 'succeeded' END
    WHEN r.status = ANY(${TERMINAL}) THEN CASE WHEN t.status IN ('awaiting_approval', 'ready') AND t.attempts = 0 THEN 'cancelled' ELSE 'uncertain' END
    WHEN t.status = 'awaiting_approval' THEN 'planned'
    WHEN t.status = 'ready' AND t.attempts = 0 THEN 'reserved'
    ELSE 'running' END`;

/** Why it is where it is, when the gate gave no reason. */
export const ACTION_REASON = `CASE
    WHEN a.reason IS NOT NULL THEN a.reason
    WHEN t.call_id IS NULL THEN 'The wake was deleted; how the call ended is not known.'
    WHEN t.status = 'completed' AND t.decision ->> 'decision' = 'deny' THEN coalesce('Denied: ' || (t.decision ->> 'reason'), 'The approval was denied.')
    WHEN t.status = 'completed' AND t.outcome IS NULL AND t.park_ended = 'timed_out' THEN 'No answer came before the deadline; the call may have acted.'
    WHEN t.status <> 'completed' AND r.status = ANY(${TERMINAL}) THEN 'The wake ended (' || r.status || ') before the call finished.'
    END`;

const SELECT_ACTIONS = `SELECT a.*, ${ACTION_STATUS} AS status, ${ACTION_REASON} AS derived_reason
  FROM objective_actions a
  LEFT JOIN tool_calls t ON t.response_id = a.response_id AND t.call_id = a.call_id
  LEFT JOIN responses r ON r.id = a.response_id`;

interface ActionRow {
  response_id: string;
  call_id: string;
  objective_id: string;
  trigger_id: string | null;
  due_at: Date | null;
  kind: string;
  tool: string;
  target_type: ObjectiveAction['target_type'];
  target: string | null;
  class: ConsequenceClass;
  policy_hash: string | null;
  request: unknown;
  verdict: 'allowed' | 'refused';
  rule: string | null;
  derived_reason: string | null;
  resolved_status: 'succeeded' | 'failed' | null;
  evidence: string | null;
  created_at: Date;
  resolved_at: Date | null;
  status: ObjectiveActionStatus;
}

function actionView(row: ActionRow): ObjectiveAction {
  return {
    id: `${row.response_id}:${row.call_id}`,
    object: 'objective_action',
    objective_id: row.objective_id,
    response_id: row.response_id,
    call_id: row.call_id,
    trigger_id: row.trigger_id,
    due_at: unixSeconds(row.due_at),
    kind: row.kind,
    tool: row.tool,
    target_type: row.target_type,
    target: row.target,
    class: row.class,
    policy_hash: row.policy_hash,
    request: row.request,
    status: row.status,
    verdict: row.verdict,
    rule: row.rule,
    reason: row.derived_reason,
    evidence: row.evidence,
    resolved: row.resolved_status !== null,
    created_at: unixSeconds(row.created_at) ?? 0,
    resolved_at: unixSeconds(row.resolved_at),
  };
}

/** `<response_id>:<call_id>`, split at the first colon (a response id has none). */
function parseActionId(id: string): { responseId: string; callId: string } | null {
  const colon = id.indexOf(':');
  if (colon <= 0 || colon === id.length - 1) return null;
  return { responseId: id.slice(0, colon), callId: id.slice(colon + 1) };
}

export interface ActionQuery {
  status?: ObjectiveActionStatus;
  class?: ConsequenceClass;
  limit?: number;
  after?: string;
}

export async function listActions(q: Queryable, projectId: string, objectiveId: string, query: ActionQuery): Promise<ObjectiveActionList> {
  const objective = await requireObjective(q, projectId, objectiveId);
  const limit = query.limit ?? 100;
  const after = query.after ? parseActionId(query.after) : null;
  if (query.after && !after) {
    throw new PalaiError('validation-failed', 'after is not an action id (<response_id>:<call_id>).', {
      errors: [{ pointer: '/after', detail: 'not an action id' }],
    });
  }
  const { rows } = await q.query<ActionRow>(
    `SELECT * FROM (${SELECT_ACTIONS}
       WHERE a.objective_id = $1 AND ($2::text IS NULL OR a.class = $2)
         AND ($4::text IS NULL OR (a.created_at, a.response_id, a.call_id) <
           (SELECT b.created_at, b.response_id, b.call_id FROM objective_actions b WHERE b.response_id = $4 AND b.call_id = $5))) x
     WHERE ($3::text IS NULL OR x.status = $3)
     ORDER BY x.created_at DESC, x.response_id DESC, x.call_id DESC LIMIT $6`,
    [objective.id, query.class ?? null, query.status ?? null, after?.responseId ?? null, after?.callId ?? null, limit + 1],
  );
  const data = rows.slice(0, limit).map(actionView);
  return { object: 'list', data, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
}

/** Settles an uncertain action once; any other (a succeeded one, one settled already) is a conflict and changes nothing. */
export async function resolveAction(
  db: Db,
  projectId: string,
  objectiveId: string,
  actionId: string,
  request: ResolveObjectiveActionRequest,
): Promise<ObjectiveAction> {
  const id = parseActionId(actionId);
  return db.transaction(async (tx) => {
    const objective = await requireObjective(tx, projectId, objectiveId);
    const notFound = new PalaiError('not-found', `Objective ${objective.id} has no action ${JSON.stringify(actionId)}.`);
    if (!id) throw notFound;
    const { rows } = await tx.query<ActionRow>(`${SELECT_ACTIONS} WHERE a.objective_id = $1 AND a.response_id = $2 AND a.call_id = $3 FOR UPDATE OF a`, [
      objective.id,
      id.responseId,
      id.callId,
    ]);
    const row = rows[0];
    if (!row) throw notFound;
    if (row.status !== 'uncertain') {
      const settled = row.resolved_status !== null ? ', settled by a person already' : '';
      throw new PalaiError('conflict', `Action ${actionId} is ${row.status}${settled}; only an uncertain action can be settled, once.`);
    }
    await tx.query(
      'UPDATE objective_actions SET resolved_status = $3, evidence = $4, resolved_at = now() WHERE response_id = $1 AND call_id = $2 AND resolved_status IS NULL',
      [id.responseId, id.callId, request.status, request.evidence ?? null],
    );
    const { rows: after } = await tx.query<ActionRow>(`${SELECT_ACTIONS} WHERE a.response_id = $1 AND a.call_id = $2`, [id.responseId, id.callId]);
    return actionView(after[0]);
  });
}
