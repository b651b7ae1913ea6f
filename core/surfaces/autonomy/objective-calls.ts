// The wing's side of the wake tools.
import type { Objective } from '../../../generated/schemas.js';
import type { Db, Queryable } from '../../store/db.js';
import { requireObjective } from './objectives.js';
import { objectiveView } from './objective-views.js';
import { dropBuffered } from './take-occurrence.js';

/** From the wakes record, never the response's metadata (which a caller may set). */
export async function objectiveOfResponse(q: Queryable, projectId: string, responseId: string): Promise<string | null> {
  const { rows } = await q.query<{ objective_id: string }>(
    'SELECT w.objective_id FROM objective_wakes w JOIN objectives o ON o.id = w.objective_id WHERE w.response_id = $1 AND o.project_id = $2',
    [responseId, projectId],
  );
  return rows[0]?.objective_id ?? null;
}

export async function completeObjective(db: Db, objectiveId: string, evidence: string): Promise<Objective> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ project_id: string }>('SELECT project_id FROM objectives WHERE id = $1', [objectiveId]);
    const objective = await requireObjective(tx, rows[0]?.project_id ?? '', objectiveId, true);
    if (objective.status === 'completed' || objective.status === 'abandoned') return objectiveView(objective);
    await dropBuffered(tx, objective, 'ended');
    await tx.query("UPDATE objectives SET status = 'completed', blocked_reason = NULL, completed_evidence = $2, updated_at = now() WHERE id = $1", [
      objective.id,
      evidence,
    ]);
    await tx.query("UPDATE objective_triggers SET status = 'done', updated_at = now() WHERE objective_id = $1", [objective.id]);
    return objectiveView(await requireObjective(tx, objective.project_id, objective.id));
  });
}
