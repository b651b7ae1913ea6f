// The A2A projection of a response: the kernel's ResponseState as an A2A Task.
// The task id is the response id and the contextId the session id, so an
// operator finds an A2A task in the REST API under the same ids. The answer is
// one artifact ("answer"): the agent's text, or its JSON as a data part when
// the agent has an output schema (then only once the task completed).
import { Role, type Artifact, type Message, type Part, type Task, type TaskStatus } from '@a2a-js/sdk';
import { outputText, type ResponseState } from '../../core/api/index.js';
import type { Item, PendingToolCall } from '../../generated/schemas.js';
import { TASK_STATE } from './task-state.js';

export const ANSWER_ARTIFACT_ID = 'answer';
/** The response metadata key that keeps the client's messageId of the message that started the task. */
export const MESSAGE_ID_KEY = 'a2a_message_id';

export const textPart = (text: string): Part => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' });
export const dataPart = (value: unknown): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' });

function message(state: ResponseState, role: Role, messageId: string, parts: Part[]): Message {
  return { messageId, contextId: state.session_id ?? '', taskId: state.id, role, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

function pendingCallView(call: PendingToolCall): Record<string, unknown> {
  let args: unknown = call.arguments;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    // Kept as the text the model wrote.
  }
  return {
    call_id: call.call_id,
    name: call.name,
    arguments: args,
    ...(call.question !== undefined ? { question: call.question } : {}),
    ...(call.approval_deadline != null ? { approval_deadline: call.approval_deadline } : {}),
  };
}

/** What a waiting task asks for, in words and as data (see answers.ts for the replies it takes). */
function waitingMessage(state: ResponseState): Message | undefined {
  const calls = state.pending_calls;
  const data = (waitingFor: string) => dataPart({ waiting_for: waitingFor, calls: calls.map(pendingCallView) });
  const id = `${state.id}:${state.status}`;
  switch (state.status) {
    case 'waiting_for_input': {
      const questions = calls.filter((c) => c.waiting_for === 'input').map((c) => c.question ?? '');
      return message(state, Role.ROLE_AGENT, id, [textPart(questions.join('\n')), data('input')]);
    }
    case 'waiting_for_approval': {
      const names = calls.filter((c) => c.waiting_for === 'approval').map((c) => `${c.name} (${c.call_id})`);
      return message(state, Role.ROLE_AGENT, id, [textPart(`Approve or deny: ${names.join(', ')}.`), data('approval')]);
    }
    case 'waiting_for_tool':
      return message(state, Role.ROLE_AGENT, id, [textPart('Send the outputs of these client tool calls.'), data('tool_output')]);
    default:
      return undefined;
  }
}

function statusMessage(state: ResponseState): Message | undefined {
  if (state.error && (state.status === 'failed' || state.status === 'timed_out' || state.status === 'budget_exceeded')) {
    return message(state, Role.ROLE_AGENT, `${state.id}:${state.status}`, [textPart(state.error.message)]);
  }
  return waitingMessage(state);
}

export function taskStatus(state: ResponseState): TaskStatus {
  return { state: TASK_STATE[state.status], message: statusMessage(state), timestamp: iso(state.status_changed_at ?? state.completed_at ?? state.created_at) };
}

/** The answer's parts as they stand, or null while there is nothing to show. */
export function answerParts(state: ResponseState, structured: boolean): Part[] | null {
  const text = outputText(state.output);
  if (!structured) return text === '' ? null : [textPart(text)];
  if (state.status !== 'completed' || text === '') return null;
  try {
    return [dataPart(JSON.parse(text))];
  } catch {
    return [textPart(text)];
  }
}

export function answerArtifact(parts: Part[]): Artifact {
  return { artifactId: ANSWER_ARTIFACT_ID, name: 'answer', description: '', parts, metadata: undefined, extensions: [] };
}

/** The task's messages: what the client sent (the response's input) and what the agent said, oldest first. */
function history(state: ResponseState, inputItems: Item[]): Message[] {
  const messages: Message[] = [];
  let first = true;
  for (const item of inputItems) {
    if (item.type !== 'message' || item.role !== 'user') continue;
    const id = first ? (state.metadata[MESSAGE_ID_KEY] ?? item.id) : item.id;
    first = false;
    messages.push(message(state, Role.ROLE_USER, id, [textPart(item.content.map((p) => p.text).join(''))]));
  }
  for (const item of state.output) {
    if (item.type !== 'message' || item.role !== 'assistant' || item.status === 'incomplete') continue;
    messages.push(message(state, Role.ROLE_AGENT, item.id, [textPart(item.content.map((p) => p.text).join(''))]));
  }
  return messages;
}

export interface TaskViewOptions {
  /** The agent has an output schema: the answer is a data part. */
  structured: boolean;
  /** The response's input items (history); without them the task has no history. */
  inputItems?: Item[];
  /** At most this many of the most recent messages (undefined: all, 0: none). */
  historyLength?: number;
}

export function toTask(state: ResponseState, options: TaskViewOptions): Task {
  const parts = answerParts(state, options.structured);
  const all = options.inputItems ? history(state, options.inputItems) : [];
  const { historyLength } = options;
  return {
    id: state.id,
    contextId: state.session_id ?? '',
    status: taskStatus(state),
    artifacts: parts ? [answerArtifact(parts)] : [],
    history: historyLength === undefined ? all : historyLength === 0 ? [] : all.slice(-historyLength),
    metadata: { palai_status: state.status, palai_agent: state.agent.name, palai_agent_revision: state.agent.revision },
  };
}
