// A response, as the result of the tools/call that started it. The answer is
// text; for an agent with an object-shaped output schema it is also the
// `structuredContent` (the same JSON). A run that did not complete is a result
// with `isError: true` whose text says why, so the model that called reads it.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { outputText, type ResponseState } from '../../core/api/index.js';
import { toolError } from './errors.js';

export const RESPONSE_ID_META = 'palai/response_id';
export const SESSION_ID_META = 'palai/session_id';
export const STATUS_META = 'palai/status';

export function resultMeta(state: ResponseState): Record<string, unknown> {
  return { [RESPONSE_ID_META]: state.id, [STATUS_META]: state.status, ...(state.session_id ? { [SESSION_ID_META]: state.session_id } : {}) };
}

/** What a waiting response asks, in words. */
export function waitingText(state: ResponseState): string {
  const calls = state.pending_calls;
  switch (state.status) {
    case 'waiting_for_input':
      return `The agent asks: ${calls.map((c) => c.question ?? '').join(' / ')}`;
    case 'waiting_for_approval':
      return `The agent waits for approval of ${calls.map((c) => `${c.name}(${c.arguments})`).join(', ')}.`;
    case 'waiting_for_tool':
      return `The agent waits for the output of the client tool(s) ${calls.map((c) => c.name).join(', ')}.`;
    default:
      return '';
  }
}

/** `structured`: the tool advertises an output schema, so a completed answer is parsed into structuredContent. */
export function callResult(state: ResponseState, structured: boolean): CallToolResult {
  const meta = resultMeta(state);
  switch (state.status) {
    case 'completed': {
      const text = outputText(state.output);
      if (!structured) return { content: [{ type: 'text', text }], _meta: meta };
      try {
        const value: unknown = JSON.parse(text);
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          return { content: [{ type: 'text', text }], structuredContent: value as Record<string, unknown>, _meta: meta };
        }
      } catch {
        // Not JSON after all (the run's own output contract was relaxed): an error, since the schema promised an object.
      }
      return toolError(`The agent's answer is not the JSON object its output schema describes: ${text}`, meta);
    }
    case 'failed':
    case 'timed_out':
    case 'budget_exceeded':
      return toolError(
        `The run ended ${state.status.replace(/_/g, ' ')}: ${state.error?.message ?? 'no reason given'}${state.error ? ` (${state.error.code})` : ''}.`,
        meta,
      );
    case 'canceled':
      return toolError('The run was canceled.', meta);
    case 'waiting_for_input':
    case 'waiting_for_approval':
    case 'waiting_for_tool':
      // Reached only when the host cannot answer through elicitation: it has to answer outside MCP (or call as a task).
      return toolError(`${waitingText(state)} Response ${state.id} waits; answer it through Palai's API, or call this tool as a task.`, meta);
    case 'queued':
    case 'in_progress':
    case 'parked':
      return toolError(`Response ${state.id} is still running.`, meta);
    default: {
      const unknown: never = state.status;
      throw new Error(`unknown response status ${String(unknown)}`);
    }
  }
}
