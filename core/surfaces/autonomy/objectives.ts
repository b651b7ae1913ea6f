// Objectives: a durable goal of one agent. One is `blocked` until a policy is
// approved by its hash; `paused` is the kill switch (the running wake is
// cancelled, no new one admitted); `completed` and `abandoned` end it.
import type { CreateObjectiveRequest, DeletedObjective, Objective, ObjectiveStatus, UpdateObjectiveRequest } from '../../../generated/schemas.js';
import { requireAgent } from '../../agents/agents.js';
import { PalaiError } from '../../errors/palai-error.js';
import { reserveKey, type IdempotencyClaim } from '../../idempotency/idempotency.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../../pagination.js';
import { cancelWithin } from '../../responses/actions.js';
import { TERMINAL_STATUSES } from '../../response-status.js';
import { requireSession } from '../../sessions/sessions.js';
import type { Db, Queryable } from '../../store/db.js';
import { objectiveView, SELECT_OBJECTIVE, type ObjectiveRow } from './objective-views.js';
import type { SessionNotices } from '../../outbox/session-notice-port.js';
import { checkNotify } from './notifications.js';
import { checkPace } from './pace.js';
import { blockReason, NO_POLICY_YET } from './policy-gate.js';
import { dropBuffered } from './take-occurrence.js';

const ENDED: readonly ObjectiveStatus[] = ['completed', 'abandoned'];

export async function requireObjective(q: Queryable, projectId: string, id: string, forUpdate = false): Promise<ObjectiveRow> {
  const { rows } = await q.query<ObjectiveRow>(`${SELECT_OBJECTIVE} WHERE o.project_id = $1 AND o.id = $2${forUpdate ? ' FOR UPDATE OF o' : ''}`, [
    projectId,
    id,
  ]);
  if (!rows[0]) throw new PalaiError('not-found', `No objective with id ${JSON.stringify(id)} in this project.`);
  return rows[0];
}

/** An ended objective takes no new policy, trigger or wake. */
export function assertOpen(row: ObjectiveRow): void {
  if (ENDED.includes(row.status)) throw new PalaiError('conflict', `Objective ${row.id} is ${row.status}; it takes no more policies, triggers or wakes.`);
}

export async function createObjective(
  db: Db,
  projectId: string,
  request: CreateObjectiveRequest,
  idem?: IdempotencyClaim,
  threads: readonly SessionNotices[] = [],
): Promise<Objective> {
  return db.transaction(async (tx) => {
    const agent = await requireAgent(tx, projectId, request.agent);
    const mode = request.session_mode ?? 'objective';
    if (request.session !== undefined) {
      if (mode !== 'objective') {
        throw new PalaiError('validation-failed', 'A session is continued only with session_mode objective.', {
          errors: [{ pointer: '/session', detail: 'per_wake starts a session for each wake; leave session out' }],
        });
      }
      const session = await requireSession(tx, projectId, request.session);
      if (session.agent_id !== null && session.agent_id !== agent.id) {
        throw new PalaiError('invalid-request', `Session ${session.id} belongs to another agent than ${agent.name}.`, {
          errors: [{ pointer: '/session', detail: 'the session is bound to another agent' }],
        });
      }
    }
    const { rows } = await tx.query<{ id: string }>(
      `INSERT INTO objectives (id, project_id, agent_id, description, success_criteria, priority, review_at, session_id,
         session_mode, overlap, status, blocked_reason, notified_block, metadata, pace, notify)
       VALUES (palai_new_id('obj'), $1, $2, $3, $4, $5, CASE WHEN $6::bigint IS NULL THEN NULL ELSE to_timestamp($6::bigint) END,
         $7, $8, $9, 'blocked', $10, $10, $11, $12, $13) RETURNING id`,
      [
        projectId,
        agent.id,
        request.description,
        request.success_criteria ?? null,
        request.priority ?? 0,
        request.review_at ?? null,
        request.session ?? null,
        mode,
        request.overlap ?? 'skip',
        // Born blocked until a policy is approved: that is no event to announce (notified_block), it never became blocked.
        NO_POLICY_YET,
        JSON.stringify(request.metadata ?? {}),
        JSON.stringify(checkPace(request.pace ?? {})),
        // An objective started on a Slack thread's session is announced in that thread unless it says otherwise.
        JSON.stringify(await checkNotify(tx, projectId, request.notify ?? {}, { sessionId: request.session ?? null, threads, byDefault: true })),
      ],
    );
    await reserveKey(tx, projectId, idem, rows[0].id);
    return objectiveView(await requireObjective(tx, projectId, rows[0].id));
  });
}

export async function getObjective(q: Queryable, projectId: string, id: string): Promise<Objective> {
  return objectiveView(await requireObjective(q, projectId, id));
}

export async function listObjectives(q: Queryable, projectId: string, query: PageRequest & { status?: ObjectiveStatus }): Promise<Page<Objective>> {
  const { rows } = await q.query<ObjectiveRow>(
    `${SELECT_OBJECTIVE} WHERE o.project_id = $1 AND ($2::text IS NULL OR o.id > $2) AND ($3::text IS NULL OR o.status = $3)
     ORDER BY o.id LIMIT $4`,
    [projectId, query.after ?? null, query.status ?? null, fetchSize(query)],
  );
  return toPage(rows, query, objectiveView);
}

/** The objective's wakes that have not ended (catch-up admits several at once). */
async function openWakes(q: Queryable, objectiveId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT r.id FROM objective_wakes w JOIN responses r ON r.id = w.response_id
     WHERE w.objective_id = $1 AND w.outcome = 'admitted' AND r.status <> ALL($2::text[])`,
    [objectiveId, TERMINAL_STATUSES],
  );
  return rows.map((r) => r.id);
}

/** Cancels, in the caller's transaction, the objective's wakes that have not ended: the kill switch commits whole or not at all. */
async function cancelOpenWakes(tx: Queryable, projectId: string, objectiveId: string): Promise<void> {
  for (const responseId of await openWakes(tx, objectiveId)) {
    try {
      await cancelWithin(tx, projectId, responseId);
    } catch (error) {
      // Ended meanwhile: checked before anything is written, so the transaction goes on.
      if (!(error instanceof PalaiError && (error.slug === 'invalid-state' || error.slug === 'not-found'))) throw error;
    }
  }
}

/** The status a PATCH asks for, as it lands: active only with a usable policy (else blocked, with why). */
async function nextStatus(
  tx: Queryable,
  row: ObjectiveRow,
  asked: UpdateObjectiveRequest['status'],
): Promise<{ status: ObjectiveStatus; reason: string | null }> {
  if (asked === undefined) return { status: row.status, reason: row.blocked_reason };
  if (asked !== 'active') return { status: asked, reason: null };
  const reason = await blockReason(tx, row.id);
  return reason === null ? { status: 'active', reason: null } : { status: 'blocked', reason };
}

export async function updateObjective(
  db: Db,
  projectId: string,
  id: string,
  request: UpdateObjectiveRequest,
  threads: readonly SessionNotices[] = [],
): Promise<Objective> {
  return db.transaction(async (tx) => {
    const row = await requireObjective(tx, projectId, id, true);
    if (ENDED.includes(row.status) && request.status !== undefined && request.status !== row.status) {
      throw new PalaiError('conflict', `Objective ${row.id} is ${row.status}; its status no longer changes.`);
    }
    const { status, reason } = await nextStatus(tx, row, request.status);
    const stops = status !== row.status && (status === 'paused' || ENDED.includes(status));
    await tx.query(
      `UPDATE objectives SET status = $2, blocked_reason = $3,
         description = coalesce($4, description),
         success_criteria = CASE WHEN $5::boolean THEN $6 ELSE success_criteria END,
         priority = coalesce($7, priority),
         review_at = CASE WHEN $8::boolean THEN (CASE WHEN $9::bigint IS NULL THEN NULL ELSE to_timestamp($9::bigint) END) ELSE review_at END,
         overlap = coalesce($10, overlap),
         metadata = coalesce($11::jsonb, metadata),
         pace = coalesce($12::jsonb, pace),
         notify = coalesce($13::jsonb, notify),
         updated_at = now()
       WHERE id = $1`,
      [
        row.id,
        status,
        reason,
        request.description ?? null,
        request.success_criteria !== undefined,
        request.success_criteria ?? null,
        request.priority ?? null,
        request.review_at !== undefined,
        request.review_at ?? null,
        request.overlap ?? null,
        request.metadata === undefined ? null : JSON.stringify(request.metadata),
        request.pace === undefined ? null : JSON.stringify(checkPace(request.pace)),
        request.notify === undefined
          ? null
          : JSON.stringify(await checkNotify(tx, projectId, request.notify, { sessionId: row.session_id, threads, byDefault: false })),
      ],
    );
    if (stops) {
      await dropBuffered(tx, row, status === 'paused' ? 'paused' : 'ended');
      await cancelOpenWakes(tx, projectId, row.id);
    }
    if (ENDED.includes(status)) await tx.query("UPDATE objective_triggers SET status = 'done', updated_at = now() WHERE objective_id = $1", [row.id]);
    return objectiveView(await requireObjective(tx, projectId, row.id));
  });
}

export async function deleteObjective(db: Db, projectId: string, id: string): Promise<DeletedObjective> {
  return db.transaction(async (tx) => {
    const row = await requireObjective(tx, projectId, id, true);
    await cancelOpenWakes(tx, projectId, row.id);
    await tx.query('DELETE FROM objectives WHERE id = $1', [row.id]);
    return { id, object: 'objective.deleted', deleted: true };
  });
}
