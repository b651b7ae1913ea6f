// Palai's implementation of the SDK's request handler: every A2A operation is a
// kernel API call, and nothing is kept here. A task is a response, a context a
// session; streams are read from the response's journal; a client's messageId
// goes through the kernel's inbox (source `a2a`), so a resent message answers
// with the task it started instead of starting another.
import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import {
  ExtendedAgentCardNotConfiguredError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { isTerminal, type IdempotencyClaim, type ResponseState } from '../../core/api/index.js';
import type { A2aSurfaceApi } from '../../core/surfaces/a2a/a2a-api.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import { BINDINGS_CARD } from './agent-card.js';
import { answerShape, type AnswerShape } from './answer-shape.js';
import { answerWaitingTask, isWaitingState } from './answers.js';
import { PushConfigs } from './push-configs.js';
import { callerOf, type Caller } from './caller.js';
import { ServiceUnavailableError, toA2aError } from './errors.js';
import { readMessage, type MessageContent } from './message-content.js';
import { statusesOf } from './task-state.js';
import { TaskStream } from './task-stream.js';
import { MESSAGE_ID_KEY, messageReply, toTask } from './task-view.js';

/** How long a cancel waits for a running task to stop before answering with its state. */
const CANCEL_WAIT_MS = 5_000;
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;
/** Journal entries read per query while catching a stream up. */
const CATCH_UP_BATCH = 500;

export class KernelRequestHandler implements A2ARequestHandler {
  private readonly push: PushConfigs;

  constructor(private readonly api: A2aSurfaceApi) {
    this.push = new PushConfigs(api);
  }

  /** Every Palai agent accepts the same bindings and versions; the SDK's transports check calls against them. */
  async getAgentCard(): Promise<AgentCard> {
    return BINDINGS_CARD;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new ExtendedAgentCardNotConfiguredError('Palai serves one card per agent; fetch it at .well-known/agent-card.json.');
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task | Message> {
    return this.guard(context, async (caller) => {
      const state = await this.accept(caller, params);
      const configuration = params.configuration;
      const answer = configuration?.returnImmediately ? state : await this.settled(caller, state.id, this.api.config.syncWaitSeconds * 1000);
      return messageReply(answer, await this.shape(caller, answer)) ?? this.task(caller, answer, configuration?.historyLength);
    });
  }

  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const state = await this.guard(context, (caller) => this.accept(caller, params));
    yield* this.follow(context, state.id);
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(context, async (caller) => {
      if (params.historyLength !== undefined && params.historyLength < 0) throw new RequestMalformedError('historyLength must not be negative.');
      return this.task(caller, await this.ownTask(caller, params.id), params.historyLength);
    });
  }

  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.guard(context, (caller) => this.list(caller, params));
  }

  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(context, async (caller) => {
      const state = await this.ownTask(caller, params.id);
      const notCancelable = () => new TaskNotCancelableError(`Task ${state.id} already ended (${state.status}); it cannot be canceled.`);
      if (isTerminal(state.status)) throw notCancelable();
      try {
        await this.api.responses.cancel(caller.projectId, state.id);
      } catch (error) {
        // It ended between the read and the cancel.
        if (isPalaiError(error) && error.slug === 'invalid-state') throw notCancelable();
        throw error;
      }
      return this.task(caller, await this.settled(caller, state.id, CANCEL_WAIT_MS));
    });
  }

  async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const state = await this.guard(context, (caller) => this.ownTask(caller, params.id));
    if (isTerminal(state.status)) {
      throw new UnsupportedOperationError(`Task ${state.id} already ended (${state.status}); read it with GetTask.`);
    }
    // §3.1.6: the stream goes on through input-required, to the task's end.
    yield* this.follow(context, state.id, { untilTerminal: true });
  }

  createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return this.guard(context, async (caller) => {
      return this.push.create(caller.projectId, await this.ownTask(caller, params.taskId), params);
    });
  }

  getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return this.guard(context, async (caller) => {
      const task = await this.ownTask(caller, params.taskId);
      const config = await this.push.get(caller.projectId, task.id, params.id);
      if (!config) throw new TaskNotFoundError(`Task ${task.id} has no push notification config ${JSON.stringify(params.id)}.`);
      return config;
    });
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.guard(context, async (caller) => {
      const task = await this.ownTask(caller, params.taskId);
      return { configs: await this.push.list(caller.projectId, task.id), nextPageToken: '' };
    });
  }

  deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    return this.guard(context, async (caller) => {
      // Idempotent (§3.1.10): a config already gone is deleted all the same.
      const task = await this.ownTask(caller, params.taskId);
      await this.push.delete(caller.projectId, task.id, params.id);
    });
  }

  /**
   * Runs `work` for the context's caller, answering any failure as an A2A
   * error. An outage is also noted on the caller: the router answers it with
   * HTTP 503 and Retry-After.
   */
  private async guard<T>(context: ServerCallContext, work: (caller: Caller) => Promise<T>): Promise<T> {
    let caller: Caller | null = null;
    try {
      caller = callerOf(context);
      return await work(caller);
    } catch (error) {
      const answer = toA2aError(error, this.api.logger);
      if (caller && answer instanceof ServiceUnavailableError) caller.unavailable = answer;
      throw answer;
    }
  }

  /**
   * The task a message starts or answers. The messageId and what the message
   * says are the inbox key: the first message does the work, a resent one
   * (same messageId, same message) gets the task the first one left, and
   * nothing else. Another message under a messageId already used is not a
   * duplicate (§3.3.1 lets an agent detect duplicates by messageId; it does not
   * make two messages one), so it is a message of its own: clients that reuse
   * ids (the A2A TCK does) are answered, and a retry still runs once.
   */
  private async accept(caller: Caller, params: SendMessageRequest): Promise<ResponseState> {
    const message = params.message;
    if (!message) throw new RequestMalformedError('message is required.');
    const content = readMessage(message);
    const { api } = this;
    const fingerprint = api.inbox.fingerprint(
      'SendMessage',
      { agent: caller.agent.id },
      { taskId: message.taskId, contextId: message.contextId, text: content.text },
    );
    const identity = {
      projectId: caller.projectId,
      source: 'a2a' as const,
      key: `${message.messageId}#${fingerprint.slice(0, 16)}`,
      operation: 'SendMessage',
      fingerprint,
    };
    const state = await api.inbox.once(
      identity,
      (claim) => (message.taskId ? this.answer(caller, message, content, claim) : this.start(caller, message, content, claim)),
      async (record) => {
        if (record.resourceId === null) throw new Error(`inbox record of ${record.operation} names no task`);
        return this.ownTask(caller, record.resourceId);
      },
    );
    const push = params.configuration?.taskPushNotificationConfig;
    if (push) {
      // Named after the message by default, so a resent message replaces its config instead of adding one.
      const config = { ...push, id: push.id || message.messageId, taskId: state.id };
      await this.push.create(caller.projectId, state, config);
      await this.push.announceCurrent(caller.projectId, state, config);
    }
    return state;
  }

  /**
   * A new task: a response of this agent, in the message's context or in a new
   * one, made by the admission itself, so the session commits (or rolls back)
   * with the task and the messageId: a resent message never leaves a second one.
   */
  private async start(caller: Caller, message: Message, content: MessageContent, claim: IdempotencyClaim): Promise<ResponseState> {
    const session = message.contextId ? { kind: 'id' as const, id: await this.existingContext(caller, message.contextId) } : { kind: 'new' as const };
    return this.api.responses.admit(
      caller.projectId,
      { agent: caller.agent.id, input: [{ role: 'user', content: content.text }], session, metadata: { [MESSAGE_ID_KEY]: message.messageId } },
      { idempotency: claim },
    );
  }

  private async existingContext(caller: Caller, contextId: string): Promise<string> {
    try {
      return (await this.api.sessions.get(caller.projectId, contextId)).id;
    } catch (error) {
      if (isPalaiError(error) && error.slug === 'not-found')
        throw new RequestMalformedError(`No context ${JSON.stringify(contextId)}; leave contextId out to start one.`);
      throw error;
    }
  }

  /** A message naming a task answers it, if it waits for an answer. */
  private async answer(caller: Caller, message: Message, content: MessageContent, claim: IdempotencyClaim): Promise<ResponseState> {
    const state = await this.ownTask(caller, message.taskId);
    if (message.contextId && message.contextId !== state.session_id) {
      throw new RequestMalformedError(`contextId ${JSON.stringify(message.contextId)} is not the context of task ${state.id}.`);
    }
    if (isTerminal(state.status)) {
      throw new UnsupportedOperationError(`Task ${state.id} already ended (${state.status}); send a new message with its contextId to go on.`);
    }
    if (!isWaitingState(state))
      throw new UnsupportedOperationError(`Task ${state.id} is ${state.status}; a message can answer it only when it is input-required.`);
    return answerWaitingTask(this.api, caller.projectId, state, content, claim);
  }

  /** A response of the caller's agent, or TaskNotFound: an agent's endpoint shows only that agent's tasks. */
  private async ownTask(caller: Caller, taskId: string): Promise<ResponseState> {
    if (!taskId) throw new RequestMalformedError('A task id is required.');
    let state: ResponseState;
    try {
      state = await this.api.responses.get(caller.projectId, taskId);
    } catch (error) {
      if (isPalaiError(error) && error.slug === 'not-found') throw new TaskNotFoundError(`No task ${JSON.stringify(taskId)}.`);
      throw error;
    }
    if (state.agent.id !== caller.agent.id) throw new TaskNotFoundError(`No task ${JSON.stringify(taskId)} for agent ${caller.agent.name}.`);
    return state;
  }

  /** Until the task ends or waits for the client (or `maxMs` passes, or the caller leaves). */
  private settled(caller: Caller, taskId: string, maxMs: number): Promise<ResponseState> {
    return this.api.responses.waitUntilSettled(caller.projectId, taskId, maxMs, caller.signal);
  }

  /** How this response's answer is shown (answer-shape.ts). */
  private shape(caller: Caller, state: ResponseState): Promise<AnswerShape> {
    return answerShape(this.api, caller.projectId, caller.agent, state);
  }

  private async task(caller: Caller, state: ResponseState, historyLength?: number): Promise<Task> {
    if (historyLength !== undefined && historyLength < 0) throw new RequestMalformedError('historyLength must not be negative.');
    const inputItems = historyLength === 0 ? [] : await this.api.responses.inputItems(caller.projectId, state.id);
    return toTask(state, { shape: await this.shape(caller, state), inputItems, historyLength });
  }

  /**
   * A task's stream from its journal: the task as it stands (everything
   * journaled so far, folded), then each later event as its updates, in
   * order and once each. It ends when the task ends, or (unless
   * `untilTerminal`) when it waits for the client.
   */
  private async *follow(context: ServerCallContext, taskId: string, { untilTerminal = false } = {}): AsyncGenerator<StreamResponse, void, undefined> {
    const { api } = this;
    const caller = callerOf(context);
    const { projectId } = caller;
    const step = <T>(work: () => Promise<T>): Promise<T> => this.guard(context, work);
    api.metrics.activeStreams.inc();
    try {
      const state = await step(() => api.responses.get(projectId, taskId));
      const stream = new TaskStream({
        shape: await step(() => this.shape(caller, state)),
        inputItems: await step(() => api.responses.inputItems(projectId, taskId)),
      });
      for (;;) {
        const batch = await step(() => api.responses.events(projectId, taskId, stream.sequence, CATCH_UP_BATCH));
        for (const entry of batch) stream.apply(entry);
        if (batch.length < CATCH_UP_BATCH) break;
      }
      yield { payload: { $case: 'task', value: stream.task() } };
      const status = stream.status();
      if (isTerminal(status) || (!untilTerminal && isWaitingState({ status } as ResponseState))) return;
      for (;;) {
        // The kernel's follow ends at a waiting status; a subscriber to the end follows on from there.
        const entries = api.responses.follow(projectId, taskId, { after: stream.sequence, signal: caller.signal });
        for (;;) {
          const next = await step(() => entries.next());
          if (next.done) break;
          for (const update of stream.apply(next.value)) yield update;
        }
        if (!untilTerminal || isTerminal(stream.status()) || caller.signal.aborted) return;
      }
    } finally {
      api.metrics.activeStreams.dec();
    }
  }

  private async list(caller: Caller, params: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE)
      throw new RequestMalformedError(`pageSize must be from 1 to ${MAX_PAGE_SIZE}.`);
    if (params.historyLength !== undefined && params.historyLength < 0) throw new RequestMalformedError('historyLength must not be negative.');
    const changedAfter = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) / 1000 : undefined;
    if (changedAfter !== undefined && !Number.isFinite(changedAfter)) throw new RequestMalformedError('statusTimestampAfter must be an ISO 8601 timestamp.');
    if (params.pageToken && !/^resp_[0-9a-z]{26}$/.test(params.pageToken)) throw new RequestMalformedError('pageToken is not one this server gave.');
    const after = params.pageToken || undefined;
    const sessionId = params.contextId || undefined;
    // A task state may stand for several kernel statuses.
    const status = params.status === TaskState.TASK_STATE_UNSPECIFIED ? undefined : statusesOf(params.status);
    const filter = { agent: caller.agent.id, sessionId, status, statusChangedAfter: changedAfter };
    const [page, totalSize] = await Promise.all([
      this.api.responses.list(caller.projectId, filter, { limit: pageSize, after, order: 'desc' }),
      this.api.responses.count(caller.projectId, filter),
    ]);
    const tasks = await Promise.all(page.data.map((state) => this.task(caller, state, params.historyLength)));
    return { tasks, nextPageToken: page.has_more ? page.data[page.data.length - 1].id : '', pageSize, totalSize };
  }
}
