// A message to an `input-required` task answers what the run waits for; the
// kernel status says which answer it takes:
//
//   waiting_for_input     the message's text is the answer to the agent's question
//   waiting_for_approval  a data part {"decision": "approve"|"deny", "call_id"?, "reason"?}
//                         (or the text "approve" / "deny"); call_id may be left out
//                         when one call waits; one decision per message
//   waiting_for_tool      a data part {"tool_outputs": [{"call_id", "output"}]};
//                         an output that is not a string is sent as its JSON
//
// Each answer goes through the kernel's own command with the message's inbox
// claim, so the answer and the messageId commit together.
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { IdempotencyClaim, ResponseState } from '../../core/api/index.js';
import type { A2aSurfaceApi } from '../../core/surfaces/a2a/a2a-api.js';
import type { MessageContent } from './message-content.js';

type WaitingState = ResponseState & { status: 'waiting_for_input' | 'waiting_for_approval' | 'waiting_for_tool' };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function approvalDecision(state: ResponseState, content: MessageContent): { call_id: string; decision: 'approve' | 'deny'; reason?: string } {
  const waiting = state.pending_calls.filter((c) => c.waiting_for === 'approval');
  const fromData = content.data.find((d) => isObject(d) && 'decision' in d);
  const spoken = content.texts.join('').trim().toLowerCase();
  let decision: unknown;
  let callId: unknown;
  let reason: unknown;
  if (isObject(fromData)) ({ decision, call_id: callId, reason } = fromData);
  else if (spoken === 'approve' || spoken === 'deny') decision = spoken;
  if (decision !== 'approve' && decision !== 'deny') {
    throw new RequestMalformedError(
      'This task waits for an approval: send a data part {"decision": "approve" | "deny", "call_id"?, "reason"?} or the text "approve" or "deny".',
    );
  }
  if (callId === undefined) {
    if (waiting.length !== 1) throw new RequestMalformedError(`${waiting.length} calls wait for a decision; name one with "call_id".`);
    callId = waiting[0].call_id;
  }
  if (typeof callId !== 'string' || callId.length === 0 || callId.length > 200)
    throw new RequestMalformedError('"call_id" must be the id of a call that waits for a decision.');
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > 4000))
    throw new RequestMalformedError('"reason" must be a text of at most 4000 characters.');
  return { call_id: callId, decision, ...(reason !== undefined ? { reason: reason as string } : {}) };
}

function toolOutputs(content: MessageContent): Array<{ call_id: string; output: string }> {
  const shape = 'This task waits for client tool outputs: send a data part {"tool_outputs": [{"call_id": "...", "output": "..."}]}.';
  const part = content.data.find((d) => isObject(d) && 'tool_outputs' in d) as { tool_outputs: unknown } | undefined;
  if (!part || !Array.isArray(part.tool_outputs) || part.tool_outputs.length === 0 || part.tool_outputs.length > 128) throw new RequestMalformedError(shape);
  return part.tool_outputs.map((entry) => {
    if (!isObject(entry) || typeof entry.call_id !== 'string' || entry.call_id.length === 0 || entry.call_id.length > 200 || entry.output === undefined) {
      throw new RequestMalformedError(shape);
    }
    return { call_id: entry.call_id, output: typeof entry.output === 'string' ? entry.output : JSON.stringify(entry.output) };
  });
}

/** Hands the message to the command for what `state` waits on; the kernel re-checks the state under its row lock. */
export function answerWaitingTask(
  api: A2aSurfaceApi,
  projectId: string,
  state: WaitingState,
  content: MessageContent,
  claim: IdempotencyClaim,
): Promise<ResponseState> {
  const options = { idempotency: claim };
  switch (state.status) {
    case 'waiting_for_input':
      return api.responses.submitInput(projectId, state.id, { input: content.text }, options);
    case 'waiting_for_approval':
      return api.responses.decideApproval(projectId, state.id, approvalDecision(state, content), options);
    case 'waiting_for_tool':
      return api.responses.submitToolOutputs(projectId, state.id, { outputs: toolOutputs(content) }, options);
    default: {
      const unknown: never = state.status;
      throw new Error(`not a waiting status: ${String(unknown)}`);
    }
  }
}

export const isWaitingState = (state: ResponseState): state is WaitingState =>
  state.status === 'waiting_for_input' || state.status === 'waiting_for_approval' || state.status === 'waiting_for_tool';
