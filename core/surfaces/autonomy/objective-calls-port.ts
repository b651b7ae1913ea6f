// What the wake tools (schedule_wake, complete_objective) ask of the wing:
// adapters/autonomy's tool provider reads only this.
import type { Objective, ObjectiveTrigger } from '../../../generated/schemas.js';
import type { ScheduleWakeCall } from './autonomy-port.js';

export interface ObjectiveCallsPort {
  /** The objective a response is a wake of, or null: the tools are offered to wakes only. */
  objectiveOf(projectId: string, responseId: string): Promise<string | null>;
  /** A one-shot trigger owned by the call: the call run again finds the one it made. */
  scheduleWake(objectiveId: string, call: ScheduleWakeCall): Promise<ObjectiveTrigger>;
  /** The objective `completed` with the evidence; its triggers are done. Again: as it is. */
  complete(objectiveId: string, evidence: string): Promise<Objective>;
}
