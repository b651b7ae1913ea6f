// The REST projection of a response: the kernel's ResponseState in the shape of
// OpenAI's Response object, so the official SDKs read it unchanged.
import type { ResponseState, ResponseStatus } from '../../core/api/index.js';
import { outputText } from '../../core/api/index.js';
import type { RequiredAction, Response } from '../../generated/schemas.js';

const ACTION_FOR: Partial<Record<ResponseStatus, RequiredAction['type']>> = {
  waiting_for_approval: 'approve_tool_calls',
  waiting_for_tool: 'submit_tool_outputs',
  waiting_for_input: 'answer_question',
};

function requiredAction(state: ResponseState): RequiredAction | null {
  const type = ACTION_FOR[state.status];
  return type ? { type, calls: state.pending_calls } : null;
}

export function openAiResponse(state: ResponseState): Response {
  return {
    id: state.id,
    object: 'response',
    created_at: state.created_at,
    completed_at: state.completed_at,
    status: state.status,
    model: state.agent.name,
    agent: state.agent,
    session_id: state.session_id,
    conversation: state.session_id === null ? null : { id: state.session_id },
    previous_response_id: state.previous_response_id,
    instructions: state.instructions,
    background: state.background,
    output: state.output,
    output_text: outputText(state.output),
    usage: state.usage,
    usage_by_step: state.usage_by_step,
    error: state.error,
    incomplete_details: state.status === 'timed_out' || state.status === 'budget_exceeded' ? { reason: state.status } : null,
    required_action: requiredAction(state),
    metadata: state.metadata,
    tools: [],
    parallel_tool_calls: true,
    tool_choice: 'auto',
    temperature: state.options?.temperature ?? null,
    max_output_tokens: state.options?.max_output_tokens ?? null,
    top_p: null,
    user: state.options?.user ?? null,
    store: true,
    truncation: 'disabled',
    text: { format: { type: 'text' } },
  };
}
