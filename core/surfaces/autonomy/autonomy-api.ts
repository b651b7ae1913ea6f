// The autonomy wing's slice of the kernel API: objectives, their policies,
// triggers and wakes, the scheduler's tick and the wake tools' calls
// (docs/autonomy.md). The autonomy surface (adapters/autonomy) receives it
// beside the KernelApi; nothing else does.
import type {
  ConsequenceClass,
  CreateObjectiveGrantRequest,
  CreateObjectivePolicyRequest,
  CreateObjectiveRequest,
  CreateObjectiveScheduleRequest,
  DeletedObjective,
  DeletedObjectiveTrigger,
  Objective,
  ObjectiveAction,
  ObjectiveActionList,
  ObjectiveActionStatus,
  ObjectiveGrant,
  ObjectiveGrantList,
  ObjectivePolicy,
  ObjectivePolicyList,
  ObjectiveStatus,
  ObjectiveTrigger,
  ObjectiveTriggerList,
  ObjectiveWake,
  ObjectiveWakeList,
  ResolveObjectiveActionRequest,
  UpdateObjectiveRequest,
} from '../../../generated/schemas.js';
import type { CommandOptions, KernelApi, Page, PageRequest } from '../../api/kernel-api.js';
import type { TickOutcome } from './autonomy-port.js';
import type { ObjectiveCallsPort } from './objective-calls-port.js';

export interface AutonomyApi {
  objectives: {
    /** Blocked (no-approved-policy) until a policy is approved by its hash. */
    create(projectId: string, request: CreateObjectiveRequest, options?: CommandOptions): Promise<Objective>;
    get(projectId: string, id: string): Promise<Objective>;
    list(projectId: string, query: PageRequest & { status?: ObjectiveStatus }): Promise<Page<Objective>>;
    /** `paused`, `completed`, `abandoned` cancel the running wake; `active` without a usable policy is `blocked`. */
    update(projectId: string, id: string, request: UpdateObjectiveRequest): Promise<Objective>;
    delete(projectId: string, id: string): Promise<DeletedObjective>;
    /** A wake now, through the same gates as a schedule; the answer is the wake as recorded. */
    wake(projectId: string, id: string, reason: string | undefined, options?: CommandOptions): Promise<ObjectiveWake>;
    /** The wake an Idempotency-Key recorded (`<trigger>@<due ms>`). */
    getWake(projectId: string, id: string, ref: string): Promise<ObjectiveWake>;
    /** Admitted and skipped occurrences, newest first. */
    wakes(projectId: string, id: string, query: { limit?: number; after?: string }): Promise<ObjectiveWakeList>;
  };
  objectivePolicies: {
    draft(projectId: string, objectiveId: string, request: CreateObjectivePolicyRequest): Promise<ObjectivePolicy>;
    list(projectId: string, objectiveId: string): Promise<ObjectivePolicyList>;
    /** Only a draft whose hash is `hash` (else policy-hash-mismatch); the approved one before it is superseded. */
    approve(projectId: string, objectiveId: string, version: number, hash: string): Promise<ObjectivePolicy>;
    revoke(projectId: string, objectiveId: string, version: number): Promise<ObjectivePolicy>;
  };
  objectiveTriggers: {
    createSchedule(projectId: string, objectiveId: string, request: CreateObjectiveScheduleRequest): Promise<ObjectiveTrigger>;
    delete(projectId: string, objectiveId: string, triggerId: string): Promise<DeletedObjectiveTrigger>;
    list(projectId: string, objectiveId: string): Promise<ObjectiveTriggerList>;
  };
  /** What a person lets the wakes act on (grants.ts). */
  objectiveGrants: {
    create(projectId: string, objectiveId: string, request: CreateObjectiveGrantRequest): Promise<ObjectiveGrant>;
    list(projectId: string, objectiveId: string): Promise<ObjectiveGrantList>;
    revoke(projectId: string, objectiveId: string, grantId: string): Promise<ObjectiveGrant>;
  };
  /** The action journal (actions.ts). */
  objectiveActions: {
    list(
      projectId: string,
      objectiveId: string,
      query: { status?: ObjectiveActionStatus; class?: ConsequenceClass; limit?: number; after?: string },
    ): Promise<ObjectiveActionList>;
    /** Only an uncertain action, once (else conflict). */
    resolve(projectId: string, objectiveId: string, actionId: string, request: ResolveObjectiveActionRequest): Promise<ObjectiveAction>;
  };
  scheduler: {
    /** One tick: due triggers claimed and taken, across projects; `batch` bounds one transaction. */
    tick(options?: { batch?: number }): Promise<TickOutcome>;
    /** One notifications pass (notifications.ts): what is new announced once; answers how many events. */
    announce(): Promise<number>;
  };
  /** What the wake tools call. */
  objectiveCalls: ObjectiveCallsPort;
}

/** What the autonomy surface is given. */
export type AutonomySurfaceApi = KernelApi & AutonomyApi;
