// A run that waits for a person — a question (waiting_for_input) or a decision
// (waiting_for_approval) — asks the host through elicitation, when the host
// said it can. The elicitation's JSON-RPC id names the response and the call
// (`palai-elicit.<response id>.<call id>`), so the host's answer can land on any
// Palai process: it goes straight to the kernel, and whoever follows the run
// sees it in the journal.
//
//   input     accept {answer}              → the answer
//             decline, cancel, an error    → the run is canceled (nobody will answer)
//   approval  accept {approve: true}       → approve
//             anything else                → deny (with the reason, if given)
import { RELATED_TASK_META_KEY, type ElicitResult, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import type { ResponseState } from '../../core/api/index.js';
import type { McpSurfaceApi } from '../../core/surfaces/mcp/mcp-api.js';
import type { McpSession } from '../../core/surfaces/mcp/mcp-sessions-port.js';

const PREFIX = 'palai-elicit.';

/** Whether the host said it answers form elicitations. */
export const canElicit = (session: McpSession): boolean => {
  const elicitation = session.clientCapabilities.elicitation as Record<string, unknown> | undefined;
  // An empty object means form mode (the only mode before URL elicitation existed).
  return elicitation !== undefined && (Object.keys(elicitation).length === 0 || elicitation.form !== undefined);
};

export function parseElicitationId(id: unknown): { responseId: string; callId: string } | null {
  if (typeof id !== 'string' || !id.startsWith(PREFIX)) return null;
  const [responseId, ...rest] = id.slice(PREFIX.length).split('.');
  const callId = rest.join('.');
  return responseId.startsWith('resp_') && callId ? { responseId, callId } : null;
}

/** The elicitation requests a waiting response implies (none for client tool outputs, which only the caller's code can give). */
export function elicitationsFor(state: ResponseState, relatedTaskId?: string): JSONRPCRequest[] {
  const meta = relatedTaskId ? { _meta: { [RELATED_TASK_META_KEY]: { taskId: relatedTaskId } } } : {};
  return state.pending_calls.flatMap((call): JSONRPCRequest[] => {
    const id = `${PREFIX}${state.id}.${call.call_id}`;
    if (call.waiting_for === 'input') {
      return [
        {
          jsonrpc: '2.0',
          id,
          method: 'elicitation/create',
          params: {
            message: call.question ?? 'The agent asks for your input.',
            requestedSchema: { type: 'object', properties: { answer: { type: 'string', title: 'Answer' } }, required: ['answer'] },
            ...meta,
          },
        },
      ];
    }
    if (call.waiting_for === 'approval') {
      return [
        {
          jsonrpc: '2.0',
          id,
          method: 'elicitation/create',
          params: {
            message: `The agent wants to call ${call.name} (risk: ${call.risk}) with ${call.arguments}. Allow it?`,
            requestedSchema: {
              type: 'object',
              properties: { approve: { type: 'boolean', title: 'Approve', description: 'Allow this call.' }, reason: { type: 'string', title: 'Reason' } },
              required: ['approve'],
            },
            ...meta,
          },
        },
      ];
    }
    return [];
  });
}

/** Applies a host's answer (or its error) to the call it was asked for; an answer that comes too late changes nothing. */
export async function applyElicitationAnswer(
  api: McpSurfaceApi,
  projectId: string,
  target: { responseId: string; callId: string },
  result: ElicitResult | null,
): Promise<void> {
  let state: ResponseState;
  try {
    state = await api.responses.get(projectId, target.responseId);
  } catch (error) {
    if (isPalaiError(error) && error.slug === 'not-found') return;
    throw error;
  }
  const call = state.pending_calls.find((c) => c.call_id === target.callId);
  if (!call) return;
  const accepted = result?.action === 'accept' ? (result.content ?? {}) : null;
  try {
    if (call.waiting_for === 'input') {
      const answer = accepted?.answer;
      if (typeof answer === 'string' && answer.length > 0) await api.responses.submitInput(projectId, state.id, { input: answer });
      else await api.responses.cancel(projectId, state.id);
    } else if (call.waiting_for === 'approval') {
      const reason =
        typeof accepted?.reason === 'string' && accepted.reason
          ? accepted.reason.slice(0, 4000)
          : result?.action === 'accept'
            ? undefined
            : `The user chose to ${result?.action ?? 'not answer'}.`;
      await api.responses.decideApproval(projectId, state.id, {
        call_id: call.call_id,
        decision: accepted?.approve === true ? 'approve' : 'deny',
        ...(reason ? { reason } : {}),
      });
    }
  } catch (error) {
    // Someone else answered first (another host, the REST API): theirs stands.
    if (isPalaiError(error) && (error.slug === 'invalid-state' || error.slug === 'conflict')) return;
    throw error;
  }
}
