// The composition root: opens the store, applies migrations, wires the kernel,
// then every surface module (cli/surfaces.ts) the same way: their HTTP mounts,
// WebSocket upgrades and REST operations on the API's port, their outbox
// consumers and tool providers, and their background loops in the roles they
// run in. It stops them in reverse order.
import type { Express } from 'express';
import { RequestTracker } from '../adapters/http/request-tracker.js';
import { restHost } from '../adapters/http/surface.js';
import type { UpgradeListener } from '../adapters/http/upgrade.js';
import { FakeModel } from '../adapters/models/fake/fake-model.js';
import { lazyModel } from '../adapters/models/lazy-model.js';
import { createKernelApi, INTAKE_ROLES, runsIn, WORK_ROLES, type KernelApi, type Role, type SurfaceModule } from '../core/api/index.js';
import type { PalaiConfig } from '../core/config.js';
import { createEgressFetch } from '../core/egress/guarded-fetch.js';
import { Wakeups } from '../core/journal/wakeups.js';
import { Lifecycle } from '../core/lifecycle.js';
import type { Kernel } from '../core/kernel.js';
import { AgentMemory } from '../core/agents/recalled-agents.js';
import { createLogger, type Logger } from '../core/logger.js';
import { Metrics } from '../core/metrics.js';
import { secretBoxFrom } from '../core/secrets/secret-box.js';
import { createSecretStore } from '../core/secrets/secret-store.js';
import { purgeExpiredKeys } from '../core/idempotency/idempotency.js';
import { runRetention } from '../core/responses/retention.js';
import { createInbox } from '../core/idempotency/inbox.js';
import { defaultTools } from '../core/tools/default-tools.js';
import type { ToolRegistry } from '../core/tools/tool-registry.js';
import { ModelRegistry } from '../core/models/model-port.js';
import type { Db } from '../core/store/db.js';
import { migrate } from '../core/store/migrate.js';
import { openDb } from '../core/store/open-db.js';
import { Worker } from '../core/runner/worker.js';
import { OutboxDispatcher } from '../core/outbox/dispatcher.js';
import type { QueueSupervisor } from '../adapters/queue/supervisor.js';
import type { SlackSocketSupervisor } from '../bots/slack/socket/supervisor.js';
import { createSurfaces, type Surfaces } from './surfaces.js';

export type { Role };

const HOUSEKEEPING_INTERVAL_MS = 10 * 60 * 1000;

/** One retention pass (core/responses/retention.ts), counted in the metrics; a failure is logged, and the next pass goes on. */
export async function retain(db: Db, config: PalaiConfig, metrics: Metrics, logger: Logger): Promise<void> {
  if (config.retentionCompactAfterMs === null && config.retentionDeleteAfterMs === null) return;
  try {
    const pass = await runRetention(db, { compactAfterMs: config.retentionCompactAfterMs, deleteAfterMs: config.retentionDeleteAfterMs });
    for (const action of ['compacted', 'deleted'] as const) {
      metrics.retentionRows.inc({ action }, pass[action].rows);
      metrics.retentionResponses.inc({ action }, pass[action].responses);
    }
    if (pass.compacted.responses + pass.deleted.responses > 0) logger.info({ ...pass }, 'retention');
  } catch (error) {
    logger.warn({ err: error }, 'retention pass failed');
  }
}

export interface Hub {
  /** The kernel's parts: for the composition root and tests, never for a surface. */
  kernel: Kernel;
  /** What surfaces are given (each also gets its own wing's slice). */
  api: KernelApi;
  /** The API. Without an operator port it serves /metrics, /healthz and /readyz too. */
  app: Express;
  /** /metrics, /healthz and /readyz alone: the operator port, and the only listener of a worker. */
  adminApp: Express;
  /** The API listener's `upgrade` handler: a WebSocket upgrade goes to the surface serving its path. Null when no surface serves upgrades. */
  upgrade: UpgradeListener | null;
  /** Requests the API is answering, so a shutdown can wait for them. */
  requests: RequestTracker;
  worker: Worker | null;
  /** Carries the outbox's deliveries to the consumers surfaces register (null on an api-only process). */
  outbox: OutboxDispatcher | null;
  /** Every surface module, in start order. */
  surfaces: Surfaces;
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
  /** More surface modules after the built-in ones (tests; later, plugins), made once the kernel API exists. */
  surfaces?: (api: KernelApi) => SurfaceModule[];
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
      agents: new AgentMemory(),
      config,
      logger,
      metrics,
      secrets: createSecretStore({ box: secretBoxFrom(config.secretKey), env: options.env ?? process.env, policy: config }),
      inbox: createInbox(db, { retentionHours: config.idempotencyRetentionHours }),
      lifecycle,
      egress,
    };
    const api = createKernelApi(kernel);
    const surfaces = createSurfaces(kernel, api);
    surfaces.modules.push(...(options.surfaces?.(api) ?? []));
    const modules = surfaces.modules.filter((module) => runsIn(module, role));
    // A test's own tool registry is used as given.
    if (!options.tools) for (const provider of modules.flatMap((m) => m.toolProviders ?? [])) kernel.tools.register(provider);
    // The apps first: if building them throws, no worker is left claiming work on a store being closed.
    const requests = new RequestTracker();
    const { app, adminApp, upgrade } = restHost(api, modules, { metrics: config.adminPort === null, tracker: requests });
    const runsWork = WORK_ROLES.includes(role);
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
    for (const consumer of modules.flatMap((m) => m.outboxConsumers ?? [])) outbox?.register(consumer);
    await outbox?.start();
    const loops = modules.flatMap((m) => m.loops ?? []).filter((loop) => runsIn(loop, role));
    const started: typeof loops = [];
    const stopLoops = async (which: (loop: (typeof loops)[number]) => boolean) => {
      for (const loop of [...started].reverse().filter(which)) await loop.stop();
    };
    /** What every start leaves behind, released in reverse: on close, or when a start fails half-way. */
    const release = async () => {
      await worker?.stop();
      await outbox?.stop();
      for (const module of [...modules].reverse()) await module.close?.();
      await wakeups.stop();
      await egress.close().catch(() => undefined);
    };
    try {
      for (const loop of loops) {
        // Counted before it starts: a start that throws half-way is stopped like the others.
        started.push(loop);
        await loop.start();
      }
    } catch (error) {
      await stopLoops(() => true).catch(() => undefined);
      await release().catch(() => undefined);
      throw error;
    }
    // Expired idempotency keys are ignored already; deleting them only keeps the table small.
    // Retention compacts and deletes finished responses in short batches, on the processes that run work.
    let retaining: Promise<void> | null = null;
    const housekeeping = setInterval(() => {
      purgeExpiredKeys(db).catch((error) => logger.warn({ err: error }, 'purging expired idempotency keys failed'));
      if (!runsWork || retaining) return;
      retaining = retain(db, config, metrics, logger).finally(() => (retaining = null));
    }, HOUSEKEEPING_INTERVAL_MS).unref();
    const takesIntake = INTAKE_ROLES.includes(role);
    return {
      kernel,
      api,
      app,
      adminApp,
      upgrade,
      requests,
      worker,
      outbox,
      surfaces,
      queues: takesIntake ? surfaces.queue.supervisor : null,
      slackSockets: takesIntake ? surfaces.slack.sockets : null,
      async close() {
        clearInterval(housekeeping);
        await retaining;
        // First: what the intakes hold is admitted and acknowledged while the store is still open.
        await stopLoops((loop) => loop.intake === true);
        lifecycle.beginClose();
        await stopLoops((loop) => loop.intake !== true);
        await release();
        if (!options.db) await db.close();
      },
    };
  } catch (error) {
    if (!options.db) await db.close().catch(() => undefined);
    throw error;
  }
}
