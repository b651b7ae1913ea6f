// The composition root: opens the store, applies migrations, wires the kernel
// with its adapters and starts the roles this process plays.
import type { Express } from 'express';
import { remoteAgentTools } from '../adapters/a2a/remote-agent-tool.js';
import { lazyPushConsumer } from '../adapters/a2a/lazy-push-consumer.js';
import { createAdminApp, createHttpApp } from '../adapters/http/app.js';
import { lazyRouter } from '../adapters/http/lazy-router.js';
import { protectedResourceRouter } from '../adapters/mcp/protected-resource.js';
import { lazyMcpClientPool } from '../adapters/mcp/client/lazy-pool.js';
import { mcpServerTools } from '../adapters/mcp/client/mcp-server-tools.js';
import { RequestTracker } from '../adapters/http/request-tracker.js';
import { FakeModel } from '../adapters/models/fake/fake-model.js';
import { lazyModel } from '../adapters/models/lazy-model.js';
import { createKernelApi, type KernelApi } from '../core/api/index.js';
import type { PalaiConfig } from '../core/config.js';
import { createEgressFetch } from '../core/egress/guarded-fetch.js';
import { Wakeups } from '../core/journal/wakeups.js';
import { Lifecycle } from '../core/lifecycle.js';
import type { Kernel } from '../core/kernel.js';
import { createLogger, type Logger } from '../core/logger.js';
import { Metrics } from '../core/metrics.js';
import { secretBoxFrom } from '../core/secrets/secret-box.js';
import { createSecretStore } from '../core/secrets/secret-store.js';
import { purgeExpiredKeys } from '../core/idempotency/idempotency.js';
import { purgeStaleMcpSessions } from '../core/surfaces/mcp/mcp-sessions.js';
import { createInbox } from '../core/idempotency/inbox.js';
import { defaultTools } from '../core/tools/default-tools.js';
import type { ToolRegistry } from '../core/tools/tool-registry.js';
import { ModelRegistry } from '../core/models/model-port.js';
import type { Db } from '../core/store/db.js';
import { migrate } from '../core/store/migrate.js';
import { openDb } from '../core/store/open-db.js';
import { Worker } from '../core/runner/worker.js';
import { OutboxDispatcher } from '../core/outbox/dispatcher.js';
import { lazyResultSender, lazyRunner } from '../adapters/queue/lazy.js';
import { queueReplyConsumer } from '../adapters/queue/reply-consumer.js';
import { QueueSupervisor } from '../adapters/queue/supervisor.js';
import { createWebhookConsumer } from '../adapters/webhooks/consumer.js';
import { slackRouter } from '../bots/slack/router.js';
import { SlackSocketSupervisor } from '../bots/slack/socket/supervisor.js';
import { SlackStreamer } from '../bots/slack/streamer.js';

/** api: the HTTP API; worker: runs responses and the outbox; consumers: runs queue consumers; all: everything. */
export type Role = 'api' | 'worker' | 'consumers' | 'all';

const HOUSEKEEPING_INTERVAL_MS = 10 * 60 * 1000;

export interface Hub {
  /** The kernel's parts: for the composition root and tests, never for a surface. */
  kernel: Kernel;
  /** What surfaces are given. */
  api: KernelApi;
  /** The API. Without an operator port it serves /metrics, /healthz and /readyz too. */
  app: Express;
  /** /metrics, /healthz and /readyz alone: the operator port, and the only listener of a worker. */
  adminApp: Express;
  /** Requests the API is answering, so a shutdown can wait for them. */
  requests: RequestTracker;
  worker: Worker | null;
  /** Carries the outbox's deliveries to the consumers surfaces register (null on an api-only process). */
  outbox: OutboxDispatcher | null;
  /** Runs the queue consumers (roles consumers and all). Stopping it finishes admitting the messages it holds. */
  queues: QueueSupervisor | null;
  /** Holds the Socket Mode connections of Slack bots in that mode (roles consumers and all). */
  slackSockets: SlackSocketSupervisor | null;
  /** Stops at once: running responses are handed back, the store is closed. */
  close(): Promise<void>;
}

export function defaultModels(config: Pick<PalaiConfig, 'modelTimeoutSeconds'>): ModelRegistry {
  const timeoutMs = config.modelTimeoutSeconds * 1000;
  return new ModelRegistry()
    .register(new FakeModel())
    .register(lazyModel('openai', async () => new (await import('../adapters/models/openai/openai-responses.js')).OpenAIResponsesModel({ timeoutMs })))
    .register(lazyModel('openai-chat', async () => new (await import('../adapters/models/openai-chat/openai-chat.js')).OpenAIChatModel({ timeoutMs })))
    .register(lazyModel('anthropic', async () => new (await import('../adapters/models/anthropic/anthropic-messages.js')).AnthropicModel({ timeoutMs })));
}

export interface HubOptions {
  config: PalaiConfig;
  role?: Role;
  /** An already-open store (tests); otherwise one is opened from the config. */
  db?: Db;
  logger?: Logger;
  models?: ModelRegistry;
  tools?: ToolRegistry;
  /** Where the operator's allow-listed model keys are read from, once (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

export async function startHub(options: HubOptions): Promise<Hub> {
  const { config, role = 'all' } = options;
  const logger = options.logger ?? createLogger(config.logLevel);
  const db = options.db ?? (await openDb(config));
  try {
    await migrate(db);
    const wakeups = new Wakeups(db);
    await wakeups.start();
    const metrics = new Metrics(db);
    const lifecycle = new Lifecycle();
    const egress = createEgressFetch({ allowHosts: config.egressAllowHosts });
    const kernel: Kernel = {
      db,
      wakeups,
      models: options.models ?? defaultModels(config),
      tools: options.tools ?? defaultTools(),
      config,
      logger,
      metrics,
      secrets: createSecretStore({ box: secretBoxFrom(config.secretKey), env: options.env ?? process.env, policy: config }),
      inbox: createInbox(db, { retentionHours: config.idempotencyRetentionHours }),
      lifecycle,
      egress,
    };
    const api = createKernelApi(kernel);
    // Remote A2A agents as tools: the provider reads them through the kernel API, so it joins once that exists.
    if (!options.tools) kernel.tools.register(remoteAgentTools(api));
    // MCP servers' tools: one MCP client per process (sessions, the operator's stdio servers), which the kernel lists tools through too.
    // It loads with the MCP SDK at its first use, as the /mcp and /a2a surfaces do at their first request and the A2A push consumer at its first delivery.
    const mcpClientLogger = logger.child({ component: 'mcp-client' });
    const mcpClients = lazyMcpClientPool(async () => new (await import('../adapters/mcp/client/client-pool.js')).McpClientPool(egress, mcpClientLogger));
    api.mcpServers.useClient(mcpClients);
    if (!options.tools) kernel.tools.register(mcpServerTools(api, mcpClients));
    // The apps first: if building them throws, no worker is left claiming work on a store being closed.
    const requests = new RequestTracker();
    const app = createHttpApp(api, { metrics: config.adminPort === null, tracker: requests, surfaces: [{ path: '/a2a', handler: lazyRouter(async () => (await import('../adapters/a2a/router.js')).a2aRouter(api)) }, { path: '/mcp', handler: lazyRouter(async () => (await import('../adapters/mcp/router.js')).mcpRouter(api)) }, { path: '/slack', handler: slackRouter(api) }, { path: '/.well-known/oauth-protected-resource', handler: protectedResourceRouter() }] });
    const adminApp = createAdminApp(api);
    const runsWork = role === 'worker' || role === 'all';
    const worker = runsWork ? new Worker(kernel) : null;
    await worker?.start();
    const outbox = runsWork
      ? new OutboxDispatcher({
          db,
          logger: logger.child({ component: 'outbox' }),
          metrics,
          pollIntervalMs: config.pollIntervalMs,
          // Webhooks give up at the end of their own schedule; the outbox must not end them sooner.
          maxAttempts: Math.max(15, config.webhookRetryScheduleMs.length + 1),
        })
      : null;
    outbox?.register(createWebhookConsumer(api));
    outbox?.register(lazyPushConsumer(async () => (await import('../adapters/a2a/push-consumer.js')).a2aPushConsumer(api, egress)));
    const replies = runsWork ? queueReplyConsumer(api, {
          sqs: lazyResultSender(api, async () => (await import('../adapters/queue/sqs/result-sender.js')).sqsResultSender),
          kafka: lazyResultSender(api, async () => (await import('../adapters/queue/kafka/result-sender.js')).kafkaResultSender),
        }) : null;
    if (replies) outbox?.register(replies);
    await outbox?.start();
    // Answers stream into Slack threads from the journal, wherever work runs.
    const slackStreamer = runsWork ? new SlackStreamer(api) : null;
    slackStreamer?.start();
    const queues = role === 'consumers' || role === 'all' ? new QueueSupervisor(api, { runners: {
            sqs: lazyRunner(async () => (await import('../adapters/queue/sqs/runner.js')).sqsRunner),
            kafka: lazyRunner(async () => (await import('../adapters/queue/kafka/runner.js')).kafkaRunner),
          }, maxBacklog: config.queueMaxBacklog }) : null;
    await queues?.start();
    const slackSockets = role === 'consumers' || role === 'all' ? new SlackSocketSupervisor(api) : null;
    await slackSockets?.start();
    // Expired idempotency keys and stale MCP sessions are ignored already; deleting them only keeps the tables small.
    const housekeeping = setInterval(() => {
      purgeExpiredKeys(db).catch((error) => logger.warn({ err: error }, 'purging expired idempotency keys failed'));
      purgeStaleMcpSessions(db).catch((error) => logger.warn({ err: error }, 'purging stale MCP sessions failed'));
    }, HOUSEKEEPING_INTERVAL_MS).unref();
    return {
      kernel,
      api,
      app,
      adminApp,
      requests,
      worker,
      outbox,
      queues,
      slackSockets,
      async close() {
        clearInterval(housekeeping);
        await slackSockets?.stop();
        // First: what the consumers hold is admitted and acknowledged while the store is still open.
        await queues?.stop();
        lifecycle.beginClose();
        await slackStreamer?.stop();
        await worker?.stop();
        await outbox?.stop();
        await replies?.close();
        await wakeups.stop();
        await mcpClients.close();
        await egress.close().catch(() => undefined);
        if (!options.db) await db.close();
      },
    };
  } catch (error) {
    if (!options.db) await db.close().catch(() => undefined);
    throw error;
  }
}
