// The calls of a wake's step through the call gate (core/tools/call-gate-port.ts),
// in the step's transaction: a refused call is committed completed with its
// refusal as the output the model reads, an allowed one goes on to the
// approval path as it was, and each carries the gate's record into its INSERT.
import type { FunctionCallOutputItem } from '../../generated/schemas.js';
import { parsedArguments } from '../tools/broker.js';
import { consequenceOf, NO_GATE, type ProposedCall } from '../tools/call-gate-port.js';
import { outputItem, type NewToolCall } from '../tools/tool-calls.js';
import type { Queryable } from '../store/db.js';
import type { RunContext } from './run-context.js';

function targetsOf(ctx: RunContext, call: NewToolCall): ProposedCall['targets'] {
  const tool = ctx.tools.get(call.name);
  if (!tool?.target) return [];
  const targets = tool.target(parsedArguments(call.arguments) ?? {});
  return targets === null ? [] : 'type' in targets ? [targets] : targets;
}

/** The calls as they are to be inserted, and the output items of the refused ones. */
export async function gateCalls(
  ctx: RunContext,
  tx: Queryable,
  objectiveId: string,
  calls: readonly NewToolCall[],
): Promise<{ calls: NewToolCall[]; refused: FunctionCallOutputItem[] }> {
  const gate = ctx.kernel.callGate ?? NO_GATE;
  const proposed = calls.map((call): ProposedCall => {
    const tool = ctx.tools.get(call.name);
    return {
      callId: call.callId,
      name: call.name,
      kind: call.kind,
      arguments: call.arguments,
      risk: call.risk,
      // A name the run has no tool for runs nothing; it is observed, not acted on.
      consequence: tool ? (tool.consequence ?? consequenceOf(tool.risk)) : 'observe',
      targets: targetsOf(ctx, call),
    };
  });
  const verdicts = await gate.decide(tx, { projectId: ctx.writer.projectId, responseId: ctx.writer.responseId, objectiveId }, proposed);
  const refused: FunctionCallOutputItem[] = [];
  const gated = calls.map((call, index): NewToolCall => {
    const { refusal, record, confinedTo } = verdicts[index];
    if (refusal === null) return { ...call, gateRecord: record, confinedTo: confinedTo ?? null };
    const output = JSON.stringify(refusal);
    refused.push(outputItem(call.callId, output));
    return { ...call, status: 'completed', output, approvalTimeoutSeconds: undefined, gateRecord: record };
  });
  return { calls: gated, refused };
}
