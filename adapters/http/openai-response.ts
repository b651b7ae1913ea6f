// The REST projection of a response: the kernel's ResponseState in the shape of
// OpenAI's Response object, so the official SDKs read it unchanged. Its status
// is OpenAI's (openai-status.ts); Palai's own is `palai_status`.
import type { ResponseState, ResponseStatus } from '../../core/api/index.js';
import { outputText } from '../../core/api/index.js';
import type { MessageItem, PendingToolCall, RequiredAction, Response, ResponseOutputItem } from '../../generated/schemas.js';
import { STATUS_PROJECTION } from './openai-status.js';
import { restOutput } from './ran-calls.js';

const ACTION_FOR: Partial<Record<ResponseStatus, RequiredAction['type']>> = {
  waiting_for_approval: 'approve_tool_calls',
  waiting_for_tool: 'submit_tool_outputs',
  waiting_for_input: 'answer_question',
};

function requiredAction(state: ResponseState): RequiredAction | null {
  const type = ACTION_FOR[state.status];
  return type ? { type, calls: state.pending_calls } : null;
}

/**
 * What a waiting response asks of its caller, as output items an OpenAI client
 * understands: a tool call awaiting a decision is OpenAI's `mcp_approval_request`
 * (answered by an `mcp_approval_response`), a question is an assistant message
 * (answered by a user message). Client function calls are in the output already.
 */
function approvalRequests(calls: PendingToolCall[]): ResponseOutputItem[] {
  return calls
    .filter((call) => call.waiting_for === 'approval')
    .map((call) => ({ id: call.call_id, type: 'mcp_approval_request', server_label: 'palai', name: call.name, arguments: call.arguments }));
}

function questions(calls: PendingToolCall[]): MessageItem[] {
  return calls
    .filter((call) => call.waiting_for === 'input')
    .map((call) => ({
      id: `msg_${call.call_id}`,
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: call.question ?? '', annotations: [] }],
    }));
}

export function openAiResponse(state: ResponseState): Response {
  const asked = [...state.output, ...questions(state.pending_calls)];
  const output: ResponseOutputItem[] = [...restOutput(asked), ...approvalRequests(state.pending_calls)];
  return {
    id: state.id,
    object: 'response',
    created_at: state.created_at,
    completed_at: state.completed_at,
    status: STATUS_PROJECTION[state.status].status,
    palai_status: state.status,
    model: state.agent.name,
    agent: state.agent,
    session_id: state.session_id,
    conversation: state.session_id === null ? null : { id: state.session_id },
    previous_response_id: state.previous_response_id,
    instructions: state.instructions,
    background: state.background,
    output,
    output_text: outputText(asked),
    usage: state.usage,
    usage_by_step: state.usage_by_step,
    error: state.error,
    incomplete_details: state.status === 'timed_out' || state.status === 'budget_exceeded' ? { reason: state.status } : null,
    required_action: requiredAction(state),
    metadata: state.metadata,
    tools: state.options?.tools ?? [],
    parallel_tool_calls: state.options?.parallel_tool_calls ?? true,
    tool_choice: state.options?.tool_choice ?? 'auto',
    temperature: state.options?.temperature ?? null,
    max_output_tokens: state.options?.max_output_tokens ?? null,
    top_p: state.options?.top_p ?? null,
    user: state.options?.user ?? null,
    store: true,
    truncation: 'disabled',
    text: { format: state.options?.text_format ?? { type: 'text' } },
  };
}
