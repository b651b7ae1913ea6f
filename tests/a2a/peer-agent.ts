// A remote A2A agent for Palai's client side, served the way an SDK user serves
// one: the SDK's own DefaultRequestHandler over an InMemoryTaskStore, mounted
// with its express handlers. What it does depends on the message text:
//
//   "ask:<question>"  input-required with the question; the next message to the
//                     task completes it with "answered: <that message>"
//   "hold:<text>"     works until the test calls release(), then completes with "peer says: <text>"
//   "fail:<text>"     fails with the text as its status message
//   anything else     completes at once with "peer says: <text>"
//
// Every message it receives is recorded, so a test can count how often a
// message was sent (a durable call sends it once, crash or not).
import express from 'express';
import { AgentCard, Role, TaskState, type Message, type Part, type Task, type TaskStatus } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { listen, partsText, text, type Listening } from './a2a-client.js';

export interface Received {
  messageId: string;
  taskId: string;
  text: string;
  headers: Record<string, string | undefined>;
}

const now = () => new Date().toISOString();

function agentMessage(taskId: string, contextId: string, value: string): Message {
  return {
    messageId: `peer-${Math.random().toString(36).slice(2)}`,
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [text(value)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

class PeerExecutor implements AgentExecutor {
  readonly received: Received[] = [];
  private held: Array<() => void> = [];
  private heldCount = 0;
  lastHeaders: Record<string, string | undefined> = {};

  release(): void {
    for (const open of this.held.splice(0)) open();
  }

  /** Messages currently held (waiting for release). */
  get holding(): number {
    return this.heldCount;
  }

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const said = partsText(context.userMessage.parts);
    const { taskId, contextId } = context;
    this.received.push({ messageId: context.userMessage.messageId, taskId, text: said, headers: this.lastHeaders });
    const status = (state: TaskState, message?: string): TaskStatus => ({
      state,
      message: message === undefined ? undefined : agentMessage(taskId, contextId, message),
      timestamp: now(),
    });
    const update = (state: TaskState, message?: string) =>
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(state, message), metadata: undefined }));
    const complete = (answer: string) => {
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: 'answer', name: 'answer', description: '', parts: [text(answer)] as Part[], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      update(TaskState.TASK_STATE_COMPLETED);
    };

    const task: Task = context.task ?? {
      id: taskId,
      contextId,
      status: status(TaskState.TASK_STATE_SUBMITTED),
      artifacts: [],
      history: [context.userMessage],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    update(TaskState.TASK_STATE_WORKING);
    if (context.task) {
      complete(`answered: ${said}`);
    } else if (said.startsWith('ask:')) {
      update(TaskState.TASK_STATE_INPUT_REQUIRED, said.slice(4));
    } else if (said.startsWith('hold:')) {
      this.heldCount++;
      await new Promise<void>((resolve) => this.held.push(resolve));
      this.heldCount--;
      complete(`peer says: ${said.slice(5)}`);
    } else if (said.startsWith('fail:')) {
      update(TaskState.TASK_STATE_FAILED, said.slice(5));
    } else {
      complete(`peer says: ${said}`);
    }
    bus.finished();
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
    bus.finished();
  }
}

export interface PeerAgent extends Listening {
  cardUrl: string;
  executor: PeerExecutor;
  /** Card fetches seen, with their headers. */
  cardFetches: Array<Record<string, string | undefined>>;
}

/** The SDK's own server for one agent on 127.0.0.1; `streaming` sets the card's capability. */
export async function startPeerAgent(options: { name?: string; streaming?: boolean; requireHeader?: [string, string] } = {}): Promise<PeerAgent> {
  const executor = new PeerExecutor();
  const cardFetches: PeerAgent['cardFetches'] = [];
  const app = express();
  let base = '';
  const card = (): AgentCard => ({
    name: options.name ?? 'peer',
    description: 'A peer agent served by the A2A SDK.',
    supportedInterfaces: [
      { url: `${base}/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: `${base}/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: options.streaming ?? true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  });
  const handler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor);
  app.use((req, res, next) => {
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v]));
    if (req.path.endsWith('agent-card.json')) cardFetches.push(headers);
    else executor.lastHeaders = headers;
    const required = options.requireHeader;
    if (required && req.get(required[0]) !== required[1]) {
      res.status(401).json({ error: 'unauthorized' });
      return;
    }
    next();
  });
  app.use(
    '/.well-known/agent-card.json',
    agentCardHandler({ agentCardProvider: async () => Object.assign(card(), { toJSON: () => AgentCard.toJSON(card()) }) }),
  );
  app.use('/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  app.use('/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  const server = await listen(app as unknown as import('express').Express);
  base = server.url;
  return { ...server, cardUrl: `${server.url}/.well-known/agent-card.json`, executor, cardFetches };
}
