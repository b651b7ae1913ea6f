// The tools of an objective's wakes, for `{type: "objective"}` entries (the hub
// adds one to every wake): resolved only for a response that is a wake, so the
// entry in an agent's own tools offers nothing elsewhere.
//
//   schedule_wake       a one-shot trigger owned by the call (`<response>:<call>`):
//                       the call run again after a crash finds the trigger it made
//   complete_objective  the objective completed with the evidence; no more wakes
import type { ObjectiveCallsPort } from '../../core/surfaces/autonomy/objective-calls-port.js';
import { MAX_WAKE_DELAY_SECONDS, OBJECTIVE_TOOL_TYPE } from '../../core/surfaces/autonomy/autonomy-port.js';
import { ToolError, type ResolvedTool, type ToolProvider } from '../../core/tools/tool-port.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import type { ObjectiveToolSpec } from '../../generated/schemas.js';

const SCHEDULE_WAKE_PARAMETERS = {
  type: 'object',
  properties: {
    after_seconds: { type: 'integer', minimum: 1, maximum: MAX_WAKE_DELAY_SECONDS, description: 'Wake again this many seconds from now.' },
    at: { type: 'string', format: 'date-time', description: 'Or wake again at this time (RFC 3339).' },
    reason: { type: 'string', minLength: 1, maxLength: 1000, description: 'What to look at then; the next wake is told.' },
  },
  required: ['reason'],
  additionalProperties: false,
};

const COMPLETE_PARAMETERS = {
  type: 'object',
  properties: { evidence: { type: 'string', minLength: 1, maxLength: 4000, description: 'What shows the success criteria are met.' } },
  required: ['evidence'],
  additionalProperties: false,
};

/** A refusal of the wing (bad time, an ended objective) is the model's to read, not the run's failure. */
async function asToolResult<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isPalaiError(error) && error.slug !== 'store-unavailable' && error.slug !== 'store-busy') throw new ToolError(error.message);
    throw error;
  }
}

function tools(calls: ObjectiveCallsPort, objectiveId: string): ResolvedTool[] {
  return [
    {
      name: 'schedule_wake',
      kind: OBJECTIVE_TOOL_TYPE,
      description: 'Come back to this objective later: give after_seconds or at, and the reason. Each call schedules one wake.',
      parameters: SCHEDULE_WAKE_PARAMETERS,
      risk: 'read',
      validateArguments: true,
      async run(args, context) {
        const { after_seconds, at, reason } = args as { after_seconds?: number; at?: string; reason: string };
        if ((after_seconds === undefined) === (at === undefined)) throw new ToolError('Give exactly one of after_seconds and at.');
        const trigger = await asToolResult(() =>
          calls.scheduleWake(objectiveId, { responseId: context.responseId, callId: context.callId, afterSeconds: after_seconds, at, reason }),
        );
        const dueAt = trigger.next_due_at === null ? null : new Date(trigger.next_due_at * 1000).toISOString();
        return { kind: 'output', output: JSON.stringify({ scheduled: trigger.id, due_at: dueAt, reason }) };
      },
    },
    {
      name: 'complete_objective',
      kind: OBJECTIVE_TOOL_TYPE,
      description: 'Say the objective is done, with the evidence that its success criteria are met. No wake follows.',
      parameters: COMPLETE_PARAMETERS,
      risk: 'read',
      validateArguments: true,
      async run(args) {
        const { evidence } = args as { evidence: string };
        const objective = await asToolResult(() => calls.complete(objectiveId, evidence));
        return { kind: 'output', output: JSON.stringify({ objective: objective.id, status: objective.status }) };
      },
    },
  ];
}

export function wakeTools(calls: ObjectiveCallsPort): ToolProvider<ObjectiveToolSpec> {
  return {
    kind: OBJECTIVE_TOOL_TYPE,
    async resolve(_spec, context) {
      const objectiveId = await calls.objectiveOf(context.projectId, context.responseId);
      return objectiveId === null ? [] : tools(calls, objectiveId);
    },
  };
}
