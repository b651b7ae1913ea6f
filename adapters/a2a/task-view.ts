// The A2A projection of a response: the kernel's ResponseState as an A2A Task.
// The task id is the response id and the contextId the session id, so an
// operator finds an A2A task in the REST API under the same ids. The answer is
// one artifact ("answer"): the agent's text, or its JSON as a data part when
// the agent has an output schema (then only once the task completed).
import { Part, Role, type Artifact, type Message, type Task, type TaskStatus } from '@a2a-js/sdk';
import { outputText, type ResponseState } from '../../core/api/index.js';
import type { Item, PendingToolCall } from '../../generated/schemas.js';
import type { AnswerShape } from './answer-shape.js';
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
  // One id per question: a client that follows the task (a Palai remote call) tells a second question from the first.
  const id = `${state.id}:${state.status}:${calls.map((c) => c.call_id).join(',')}`;
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

/** An answer of a `parts` agent read as its A2A parts object, or null when it is not one (then it is text). */
export function partsAnswer(text: string): { parts: Part[]; reply: 'message' | 'task' } | null {
  if (!text.trimStart().startsWith('{')) return null;
  try {
    const value = JSON.parse(text) as { parts?: unknown; reply?: unknown };
    if (!Array.isArray(value.parts) || value.parts.length === 0) return null;
    const parts = value.parts.map((part) => Part.fromJSON(part));
    if (parts.some((part) => part.content === undefined)) return null;
    return { parts, reply: value.reply === 'message' ? 'message' : 'task' };
  } catch {
    return null;
  }
}

/** The answer's parts as they stand, or null while there is nothing to show. */
export function answerParts(state: ResponseState, shape: AnswerShape): Part[] | null {
  const text = outputText(state.output);
  if (text === '') return null;
  if (shape === 'text') return [textPart(text)];
  if (shape === 'parts') {
    // A parts object is shown once it is whole; until the task completes, what may become one is held back.
    if (state.status !== 'completed') return text.trimStart().startsWith('{') ? null : [textPart(text)];
    return partsAnswer(text)?.parts ?? [textPart(text)];
  }
  if (state.status !== 'completed') return null;
  try {
    return [dataPart(JSON.parse(text))];
  } catch {
    return [textPart(text)];
  }
}

/** A `parts` agent's completed answer that asks to be a Message reply: that Message. */
export function messageReply(state: ResponseState, shape: AnswerShape): Message | null {
  if (shape !== 'parts' || state.status !== 'completed') return null;
  const answer = partsAnswer(outputText(state.output));
  return answer?.reply === 'message' ? message(state, Role.ROLE_AGENT, `${state.id}:reply`, answer.parts) : null;
}

export function answerArtifact(parts: Part[]): Artifact {
  return { artifactId: ANSWER_ARTIFACT_ID, name: 'answer', description: '', parts, metadata: undefined, extensions: [] };
}

/** The question an ask_user call put to the client, or null for any other call. */
function questionOf(item: Item): string | null {
  if (item.type !== 'function_call' || item.name !== 'ask_user') return null;
  try {
    const question = (JSON.parse(item.arguments) as { question?: unknown }).question;
    return typeof question === 'string' ? question : null;
  } catch {
    return null;
  }
}

/**
 * The task's messages, oldest first: what the client sent (the response's
 * input, then each answer to a question of the agent's) and what the agent
 * said (its messages and the questions it asked).
 */
function history(state: ResponseState, inputItems: Item[]): Message[] {
  const messages: Message[] = [];
  let first = true;
  for (const item of inputItems) {
    if (item.type !== 'message' || item.role !== 'user') continue;
    const id = first ? (state.metadata[MESSAGE_ID_KEY] ?? item.id) : item.id;
    first = false;
    messages.push(message(state, Role.ROLE_USER, id, [textPart(item.content.map((p) => p.text).join(''))]));
  }
  const questions = new Set<string>();
  for (const item of state.output) {
    const question = questionOf(item);
    if (question !== null && item.type === 'function_call') {
      questions.add(item.call_id);
      messages.push(message(state, Role.ROLE_AGENT, item.id, [textPart(question)]));
    } else if (item.type === 'function_call_output' && questions.has(item.call_id)) {
      messages.push(message(state, Role.ROLE_USER, item.id, [textPart(item.output)]));
    } else if (item.type === 'message' && item.role === 'assistant' && item.status !== 'incomplete') {
      messages.push(message(state, Role.ROLE_AGENT, item.id, [textPart(item.content.map((p) => p.text).join(''))]));
    }
  }
  return messages;
}

export interface TaskViewOptions {
  /** How the answer is shown (answer-shape.ts). */
  shape: AnswerShape;
  /** The response's input items (history); without them the task has no history. */
  inputItems?: Item[];
  /** At most this many of the most recent messages (undefined: all, 0: none). */
  historyLength?: number;
}

export function toTask(state: ResponseState, options: TaskViewOptions): Task {
  const parts = answerParts(state, options.shape);
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
