// Binds the autonomy wing's slice to one kernel.
import { atBoundary } from '../../api/boundary.js';
import type { Kernel } from '../../kernel.js';
import { BUILTIN_ENTRY_CHECK } from '../../responses/admission-command.js';
import { listActions, resolveAction } from './actions.js';
import type { AutonomyApi } from './autonomy-api.js';
import { createGrant, listGrants, revokeGrant } from './grants.js';
import { announcePending } from './notifications.js';
import { completeObjective, objectiveOfResponse } from './objective-calls.js';
import { createObjective, deleteObjective, getObjective, listObjectives, updateObjective } from './objectives.js';
import { approvePolicy, draftPolicy, listPolicies, revokePolicy } from './policies.js';
import { tick } from './scheduler.js';
import { createSchedule, deleteTrigger, listTriggers, scheduleOnce } from './triggers.js';
import { getWake, listWakes, wakeNow } from './wakes.js';

/** The most triggers one scheduler transaction takes: the wakes of a batch are seen by the workers when it commits. */
export const DEFAULT_TICK_BATCH = 50;

export function createAutonomyApi(kernel: Pick<Kernel, 'db' | 'config'> & Partial<Pick<Kernel, 'tools' | 'sessionNotices'>>): AutonomyApi {
  const { db, config, tools } = kernel;
  const entries = tools ?? BUILTIN_ENTRY_CHECK;
  // Read at each call: the wings whose threads are sessions register after this slice is made.
  const threads = () => kernel.sessionNotices ?? [];
  return atBoundary({
    objectives: {
      create: (projectId, request, options) => createObjective(db, projectId, request, options?.idempotency, threads()),
      get: (projectId, id) => getObjective(db, projectId, id),
      list: (projectId, query) => listObjectives(db, projectId, query),
      update: (projectId, id, request) => updateObjective(db, projectId, id, request, threads()),
      delete: (projectId, id) => deleteObjective(db, projectId, id),
      wake: (projectId, id, reason, options) => wakeNow(db, entries, projectId, id, reason, options?.idempotency),
      getWake: (projectId, id, ref) => getWake(db, projectId, id, ref),
      wakes: (projectId, id, query) => listWakes(db, projectId, id, query),
    },
    objectivePolicies: {
      draft: (projectId, objectiveId, request) => draftPolicy(db, projectId, objectiveId, request.document),
      list: (projectId, objectiveId) => listPolicies(db, projectId, objectiveId),
      approve: (projectId, objectiveId, version, hash) => approvePolicy(db, projectId, objectiveId, version, hash),
      revoke: (projectId, objectiveId, version) => revokePolicy(db, projectId, objectiveId, version),
    },
    objectiveTriggers: {
      createSchedule: (projectId, objectiveId, request) => createSchedule(db, config.minScheduleSeconds, projectId, objectiveId, request),
      delete: (projectId, objectiveId, triggerId) => deleteTrigger(db, projectId, objectiveId, triggerId),
      list: (projectId, objectiveId) => listTriggers(db, projectId, objectiveId),
    },
    objectiveGrants: {
      create: (projectId, objectiveId, request) => createGrant(db, projectId, objectiveId, request),
      list: (projectId, objectiveId) => listGrants(db, projectId, objectiveId),
      revoke: (projectId, objectiveId, grantId) => revokeGrant(db, projectId, objectiveId, grantId),
    },
    objectiveActions: {
      list: (projectId, objectiveId, query) => listActions(db, projectId, objectiveId, query),
      resolve: (projectId, objectiveId, actionId, request) => resolveAction(db, projectId, objectiveId, actionId, request),
    },
    scheduler: {
      tick: (options) => tick(db, { graceSeconds: config.scheduleGraceSeconds, batch: options?.batch ?? DEFAULT_TICK_BATCH, tools: entries }),
      announce: () => announcePending(db, threads()),
    },
    objectiveCalls: {
      objectiveOf: (projectId, responseId) => objectiveOfResponse(db, projectId, responseId),
      scheduleWake: (objectiveId, call) => scheduleOnce(db, objectiveId, call),
      complete: (objectiveId, evidence) => completeObjective(db, objectiveId, evidence),
    },
  });
}
