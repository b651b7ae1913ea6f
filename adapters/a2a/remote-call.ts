// One call of a remote A2A agent's tool (the provider is remote-agent-tool.ts,
// which loads this, and the A2A SDK's client with it, at the first call): the
// task sent or read back by its checkpoint, followed until it settles.
import { AgentCard, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RemoteAgentConnection } from '../../core/surfaces/a2a/a2a-api.js';
import type { EgressFetch } from '../../core/egress/egress-port.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import { ToolError, type ToolCallContext, type ToolOutcome } from '../../core/tools/tool-port.js';

/** How often a task of an agent that cannot stream is read while it runs. */
const POLL_MS = 500;
/** Reads of a task that fail in a row before the call gives up. */
const MAX_READ_FAILURES = 5;

/** What a call commits before it waits: where its task is, and which question it surfaced. */
interface RemoteCheckpoint {
  task_id: string;
  context_id: string;
  /** The answers sent to this task so far (each its own messageId). */
  answers: number;
  /** The status message (or timestamp) of the input-required question the human was asked, while they are asked. */
  question?: string;
}

const SETTLED = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

const textPart = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });

function partsText(parts: Part[]): string {
  return parts
    .map((p) => (p.content?.$case === 'text' ? p.content.value : p.content?.$case === 'data' ? JSON.stringify(p.content.value) : ''))
    .filter((t) => t !== '')
    .join('\n');
}

function message(text: string, messageId: string, task?: { id: string; contextId: string }): Message {
  return {
    messageId,
    contextId: task?.contextId ?? '',
    taskId: task?.id ?? '',
    role: 1 /* Role.ROLE_USER */,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The card as the SDK's client wants it: a 1.0 card from its JSON form, a 0.3 card translated. */
function parseCard(raw: Record<string, unknown>): AgentCard {
  if (Array.isArray(raw.supportedInterfaces)) return AgentCard.fromJSON(raw);
  return new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }).normalizeAgentCard(raw as unknown as AgentCard);
}

/** The egress guard's fetch, with the remote agent's headers on every request. */
function remoteFetch(egress: EgressFetch, headers: Record<string, string>): typeof fetch {
  return (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return egress(input as string | URL | Request, { ...init, headers: merged });
  };
}

async function clientFor(connection: RemoteAgentConnection, egress: EgressFetch): Promise<{ client: Client; card: AgentCard }> {
  const fetchImpl = remoteFetch(egress, connection.headers);
  const legacyCompat = { enabled: true };
  const card = parseCard(connection.card);
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat }), new RestTransportFactory({ fetchImpl, legacyCompat })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
  });
  return { client: await factory.createFromAgentCard(card), card };
}

const stateName = (state: TaskState | undefined): string =>
  state === undefined ? 'unknown' : (TaskState[state] ?? String(state)).replace('TASK_STATE_', '').toLowerCase();

/** Says what went wrong without leaking anything but the remote's own words. */
function remoteFailure(name: string, error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  if (isPalaiError(error)) return new ToolError(error.message);
  const detail = error instanceof Error ? error.message : String(error);
  return new ToolError(`The remote agent ${name} could not be reached: ${detail}`);
}

class RemoteCall {
  /** The question this run answered: a task still showing it has not taken the answer in yet. */
  private answered: string | undefined;

  constructor(
    private readonly name: string,
    private readonly client: Client,
    private readonly streaming: boolean,
    private readonly context: ToolCallContext,
  ) {}

  private get signal(): AbortSignal {
    return this.context.signal;
  }

  /** Sends the message; a remote that answers with a message instead of a task answers the call at once. */
  async start(text: string): Promise<ToolOutcome> {
    const result = await this.client.sendMessage(
      {
        tenant: '',
        message: message(text, this.context.idempotencyKey),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true, historyLength: 0 },
        metadata: undefined,
      },
      { signal: this.signal },
    );
    if (!('status' in result)) return { kind: 'output', output: partsText((result as Message).parts) };
    const task = result as Task;
    const checkpoint: RemoteCheckpoint = { task_id: task.id, context_id: task.contextId, answers: 0 };
    await this.context.saveCheckpoint(checkpoint);
    return this.follow(checkpoint, task);
  }

  /** A later run: the answer to the question it surfaced goes to the task, once; then it waits again. */
  async resume(checkpoint: RemoteCheckpoint): Promise<ToolOutcome> {
    let task = await this.read(checkpoint.task_id);
    const { answer } = this.context;
    if (answer !== null && checkpoint.question !== undefined) {
      // Still asking the question the human answered: the answer was not sent yet.
      if (isAsking(task.status?.state) && questionOf(task) === checkpoint.question) {
        const result = await this.client.sendMessage(
          {
            tenant: '',
            message: message(answer, `${this.context.idempotencyKey}:answer:${checkpoint.answers + 1}`, {
              id: checkpoint.task_id,
              contextId: checkpoint.context_id,
            }),
            configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true, historyLength: 0 },
            metadata: undefined,
          },
          { signal: this.signal },
        );
        if ('status' in result) task = result as Task;
      }
      this.answered = checkpoint.question;
      checkpoint = { task_id: checkpoint.task_id, context_id: checkpoint.context_id, answers: checkpoint.answers + 1 };
      await this.context.saveCheckpoint(checkpoint);
    }
    return this.follow(checkpoint, task);
  }

  /** Until the task settles, from its stream when the agent streams, else by reading it. */
  private async follow(checkpoint: RemoteCheckpoint, task: Task): Promise<ToolOutcome> {
    let failures = 0;
    let streaming = this.streaming;
    // A quick agent is done by now: one read spares a subscription to a task that already ended.
    if (!this.settled(task)) task = await this.read(task.id);
    while (!this.settled(task)) {
      this.signal.throwIfAborted();
      try {
        if (streaming) {
          try {
            for await (const event of this.client.resubscribeTask({ tenant: '', id: task.id }, { signal: this.signal })) {
              const status = event.payload?.$case === 'statusUpdate' || event.payload?.$case === 'task' ? event.payload.value.status : undefined;
              if (status && this.settled({ status })) break;
            }
            // A stream that showed nothing new (the old question, say) is not read back at full speed.
            if (this.answered !== undefined) await sleep(POLL_MS / 5, undefined, { signal: this.signal });
          } catch (error) {
            this.signal.throwIfAborted();
            // The task ended between the read and the subscription, or the agent does not stream after all: read it from now on.
            streaming = false;
          }
        } else {
          await sleep(POLL_MS, undefined, { signal: this.signal });
        }
        task = await this.read(task.id);
        failures = 0;
      } catch (error) {
        this.signal.throwIfAborted();
        // A flaky network is retried, a few times, with growing pauses.
        if (++failures >= MAX_READ_FAILURES) throw remoteFailure(this.name, error);
        await sleep(POLL_MS * failures, undefined, { signal: this.signal });
      }
    }
    return this.outcome(checkpoint, task);
  }

  private settled(task: Pick<Task, 'status'>): boolean {
    const state = task.status?.state;
    if (state === undefined || !SETTLED.has(state)) return false;
    return !(isAsking(state) && this.answered !== undefined && questionOf(task) === this.answered);
  }

  private async read(taskId: string): Promise<Task> {
    return this.client.getTask({ tenant: '', id: taskId }, { signal: this.signal });
  }

  private async outcome(checkpoint: RemoteCheckpoint, task: Task): Promise<ToolOutcome> {
    const state = task.status?.state;
    const parts = task.status?.message?.parts ?? [];
    // What a person reads: the text parts; a status message of data alone is shown as its JSON.
    const said = partsText(parts.some((p) => p.content?.$case === 'text') ? parts.filter((p) => p.content?.$case === 'text') : parts);
    switch (state) {
      case TaskState.TASK_STATE_COMPLETED: {
        const answer = task.artifacts
          .map((a) => partsText(a.parts))
          .filter((t) => t !== '')
          .join('\n');
        return { kind: 'output', output: answer || said || lastAgentMessage(task) };
      }
      case TaskState.TASK_STATE_INPUT_REQUIRED:
      case TaskState.TASK_STATE_AUTH_REQUIRED: {
        await this.context.saveCheckpoint({ ...checkpoint, question: questionOf(task) } satisfies RemoteCheckpoint);
        const question =
          said || `The remote agent ${this.name} needs ${state === TaskState.TASK_STATE_AUTH_REQUIRED ? 'authorization' : 'more input'} to go on.`;
        return { kind: 'await_input', question, resume: true };
      }
      default:
        throw new ToolError(
          `The remote agent ${this.name} ${stateName(state) === 'rejected' ? 'rejected the task' : `ended the task ${stateName(state)}`}${said ? `: ${said}` : '.'}`,
        );
    }
  }
}

/** The task waits for its client: more input, or authorization. */
const isAsking = (state: TaskState | undefined): boolean => state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED;

/** What identifies the question a task asks now: its status message, else its status time. */
function questionOf(task: Pick<Task, 'status'>): string {
  return task.status?.message?.messageId || task.status?.timestamp || 'input-required';
}

function lastAgentMessage(task: Task): string {
  const agent = task.history.filter((m) => m.role === 2 /* Role.ROLE_AGENT */);
  return agent.length > 0 ? partsText(agent[agent.length - 1].parts) : '';
}

function isCheckpoint(value: unknown): value is RemoteCheckpoint {
  return typeof value === 'object' && value !== null && typeof (value as RemoteCheckpoint).task_id === 'string';
}

/** One call: a new task for the message, or (a later run) the task the call's checkpoint names. */
export async function runRemoteCall(
  connection: RemoteAgentConnection,
  egress: EgressFetch,
  args: { message: string },
  context: ToolCallContext,
): Promise<ToolOutcome> {
  let call: RemoteCall;
  try {
    const { client, card } = await clientFor(connection, egress);
    call = new RemoteCall(connection.name, client, card.capabilities?.streaming === true, context);
  } catch (error) {
    throw remoteFailure(connection.name, error);
  }
  try {
    return isCheckpoint(context.checkpoint) ? await call.resume(context.checkpoint) : await call.start(args.message);
  } catch (error) {
    context.signal.throwIfAborted();
    throw remoteFailure(connection.name, error);
  }
}
