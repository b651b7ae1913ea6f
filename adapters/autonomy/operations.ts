// /v1/objectives and what hangs off one: policies approved by hash, schedules,
// triggers, the manual wake and the wakes record.
import type { SurfaceOperations } from '../../core/api/surface.js';
import type { AutonomyApi } from '../../core/surfaces/autonomy/autonomy-api.js';
import type { WakeMetrics } from './metrics.js';

export function objectiveOperations(
  { objectives, objectivePolicies, objectiveTriggers, objectiveGrants, objectiveActions }: AutonomyApi,
  metrics: () => WakeMetrics,
): SurfaceOperations {
  return {
    createObjective: async ({ projectId, body, idempotency, replay }) => {
      if (replay) return { status: 201, body: await objectives.get(projectId, replay.resourceId) };
      return { status: 201, body: await objectives.create(projectId, body, { idempotency }) };
    },
    listObjectives: async ({ projectId, query }) => ({ body: await objectives.list(projectId, query) }),
    getObjective: async ({ projectId, params }) => ({ body: await objectives.get(projectId, params.objective) }),
    updateObjective: async ({ projectId, params, body }) => ({ body: await objectives.update(projectId, params.objective, body) }),
    deleteObjective: async ({ projectId, params }) => ({ body: await objectives.delete(projectId, params.objective) }),
    createObjectivePolicy: async ({ projectId, params, body }) => ({ status: 201, body: await objectivePolicies.draft(projectId, params.objective, body) }),
    listObjectivePolicies: async ({ projectId, params }) => ({ body: await objectivePolicies.list(projectId, params.objective) }),
    approveObjectivePolicy: async ({ projectId, params, body }) => ({
      body: await objectivePolicies.approve(projectId, params.objective, Number(params.version), body.hash),
    }),
    revokeObjectivePolicy: async ({ projectId, params }) => ({ body: await objectivePolicies.revoke(projectId, params.objective, Number(params.version)) }),
    createObjectiveSchedule: async ({ projectId, params, body }) => ({
      status: 201,
      body: await objectiveTriggers.createSchedule(projectId, params.objective, body),
    }),
    deleteObjectiveSchedule: async ({ projectId, params }) => ({ body: await objectiveTriggers.delete(projectId, params.objective, params.trigger) }),
    listObjectiveTriggers: async ({ projectId, params }) => ({ body: await objectiveTriggers.list(projectId, params.objective) }),
    wakeObjective: async ({ projectId, params, body, idempotency, replay }) => {
      if (replay) return { status: 201, body: await objectives.getWake(projectId, params.objective, replay.resourceId) };
      const wake = await objectives.wake(projectId, params.objective, body?.reason, { idempotency });
      metrics().count(wake.outcome, wake.reason);
      return { status: 201, body: wake };
    },
    listObjectiveWakes: async ({ projectId, params, query }) => ({ body: await objectives.wakes(projectId, params.objective, query) }),
    createObjectiveGrant: async ({ projectId, params, body }) => ({ status: 201, body: await objectiveGrants.create(projectId, params.objective, body) }),
    listObjectiveGrants: async ({ projectId, params }) => ({ body: await objectiveGrants.list(projectId, params.objective) }),
    revokeObjectiveGrant: async ({ projectId, params }) => ({ body: await objectiveGrants.revoke(projectId, params.objective, params.grant) }),
    listObjectiveActions: async ({ projectId, params, query }) => ({ body: await objectiveActions.list(projectId, params.objective, query) }),
    resolveObjectiveAction: async ({ projectId, params, body }) => ({
      body: await objectiveActions.resolve(projectId, params.objective, params.action, body),
    }),
  };
}
