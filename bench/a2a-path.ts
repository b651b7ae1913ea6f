// A2A SendMessage round trip: the official SDK client (JSON-RPC) sending a
// blocking message to a Palai agent — admission, inbox key, the durable run on
// the fake model, the journal — against the same client and call to an agent
// served by the SDK's own DefaultRequestHandler over its in-memory task store,
// in the same process and run. Prints p50 and p99 of both and their ratio;
// asserts nothing.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AgentCard, Role, TaskState, type Message, type Part, type SendMessageRequest } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, DefaultAgentCardResolver, type Client } from '@a2a-js/sdk/client';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { startHub } from '../cli/hub.js';
import { createApiKey } from '../core/auth/api-keys.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import type { Db } from '../core/store/db.js';
import { onEachStore } from './stores.js';

const CALLS = Number(process.env.PALAI_BENCH_A2A_CALLS ?? 200);
const WARMUP = 20;
const INPUT = 'the quick brown fox jumps over the lazy dog';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });

function request(): SendMessageRequest {
  const message: Message = {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [text(INPUT)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: '', message, configuration: undefined, metadata: undefined };
}

async function listen(app: express.Express): Promise<{ url: string; close(): Promise<void> }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function client(baseUrl: string, apiKey?: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    if (apiKey) headers.set('authorization', `Bearer ${apiKey}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })], cardResolver: new DefaultAgentCardResolver({ fetchImpl }) });
  return factory.createFromUrl(baseUrl);
}

/** Sequential blocking sends; each must come back completed. */
async function measure(c: Client): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await c.sendMessage(request());
  const latencies: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    const task = await c.sendMessage(request());
    latencies.push(performance.now() - started);
    if (!('status' in task) || task.status?.state !== TaskState.TASK_STATE_COMPLETED) throw new Error(`a send did not complete: ${JSON.stringify(task)}`);
  }
  return latencies.sort((a, b) => a - b);
}

/** The SDK's own server: an agent that answers with the message's text, as Palai's fake model does. */
async function sdkAgent(): Promise<{ url: string; close(): Promise<void> }> {
  let base = '';
  const card = (): AgentCard => ({
    name: 'echo',
    description: 'echo',
    supportedInterfaces: [{ url: `${base}/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: '1',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  });
  const executor: AgentExecutor = {
    async execute(context, bus) {
      const { taskId, contextId } = context;
      const said = context.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      const status = (state: TaskState) => ({ state, message: undefined, timestamp: new Date().toISOString() });
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(TaskState.TASK_STATE_SUBMITTED),
          artifacts: [],
          history: [context.userMessage],
          metadata: undefined,
        }),
      );
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }));
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: 'answer', name: 'answer', description: '', parts: [text(said)], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined }));
      bus.finished();
    },
    async cancelTask() {},
  };
  const handler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor);
  const app = express();
  app.use(
    '/.well-known/agent-card.json',
    agentCardHandler({ agentCardProvider: async () => Object.assign(card(), { toJSON: () => AgentCard.toJSON(card()) }) }),
  );
  app.use('/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  const server = await listen(app);
  base = server.url;
  return server;
}

async function bench(label: string, db: Db): Promise<void> {
  const config = { ...loadConfig({}), logLevel: 'silent', pollIntervalMs: 200 };
  const hub = await startHub({ config, db, logger: createLogger('silent') });
  const palai = await listen(hub.app);
  const project = await createProject(db, `bench-a2a-${Date.now()}`);
  const key = await createApiKey(db, project.id, 'bench');
  const agent = `bench-a2a-${Date.now()}`;
  await fetch(`${palai.url}/v1/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: agent, model: { provider: 'fake' } }),
  });
  const sdk = await sdkAgent();
  try {
    const throughSdk = await measure(await client(`${sdk.url}/`));
    const throughPalai = await measure(await client(`${palai.url}/a2a/${agent}/`, key.secret));
    const [p50, p99, s50, s99] = [percentile(throughPalai, 50), percentile(throughPalai, 99), percentile(throughSdk, 50), percentile(throughSdk, 99)];
    console.log(`\n## ${label}`);
    console.log(`A2A SendMessage (blocking, JSON-RPC, ${CALLS} sequential, SDK client):`);
    console.log(`  through Palai (durable):       p50 ${fmt(p50)}, p99 ${fmt(p99)}`);
    console.log(`  SDK in-memory agent server:    p50 ${fmt(s50)}, p99 ${fmt(s99)}`);
    console.log(`  ratio Palai / SDK:             p50 ${(p50 / s50).toFixed(1)}×, p99 ${(p99 / s99).toFixed(1)}×`);
  } finally {
    await sdk.close();
    await palai.close();
    await hub.close();
  }
}

export async function benchA2aPath(): Promise<void> {
  await onEachStore((store, db) => bench(`A2A path, ${store}`, db));
}

if (import.meta.url === `file://${process.argv[1]}`) await benchA2aPath();
