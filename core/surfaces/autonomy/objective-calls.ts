// The wing's side of the wake tools.
import type { Objective } from '../../../generated/schemas.js';
import type { Db, Queryable } from '../../store/db.js';
import { WAKE_METADATA } from './autonomy-port.js';
import { requireObjective } from './objectives.js';
import { objectiveView } from './objective-views.js';

export async function objectiveOfResponse(q: Queryable, projectId: string, responseId: string): Promise<string | null> {
  const { rows } = await q.query<{ objective: string | null }>(
    `SELECT r.metadata ->> '${WAKE_METADATA.objective}' AS objective FROM responses r
     JOIN objectives o ON o.id = r.metadata ->> '${WAKE_METADATA.objective}' AND o.project_id = r.project_id
     WHERE r.project_id = $1 AND r.id = $2`,
    [projectId, responseId],
  );
  return rows[0]?.objective ?? null;
}

export async function completeObjective(db: Db, objectiveId: string, evidence: string): Promise<Objective> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ project_id: string }>('SELECT project_id FROM objectives WHERE id = $1', [objectiveId]);
    const objective = await requireObjective(tx, rows[0]?.project_id ?? '', objectiveId, true);
    if (objective.status === 'completed' || objective.status === 'abandoned') return objectiveView(objective);
    await tx.query(
      `UPDATE objectives SET status = 'completed', blocked_reason = NULL, completed_evidence = $2,
         buffered_trigger_id = NULL, buffered_due_at = NULL, updated_at = now() WHERE id = $1`,
      [objective.id, evidence],
    );
    await tx.query("UPDATE objective_triggers SET status = 'done', updated_at = now() WHERE objective_id = $1", [objective.id]);
    return objectiveView(await requireObjective(tx, objective.project_id, objective.id));
  });
}
