// Binds the kernel API to one kernel: each member calls the core module that owns
// the operation, with the store and the wake-ups only the kernel holds.
import { agentView, createAgent, listAgents, listRevisions, projectOfAgent, requireAgent, updateAgent } from '../agents/agents.js';
import { authenticate } from '../auth/api-keys.js';
import { PalaiError } from '../errors/palai-error.js';
import { followEvents, lastSequence, readEvents } from '../journal/journal.js';
import { followProjectEvents, latestCursor } from '../journal/project-feed.js';
import type { Kernel } from '../kernel.js';
import { createMcpSessions } from '../mcp-sessions/mcp-sessions.js';
import { createMcpServers } from '../mcp-servers/mcp-servers.js';
import { socketEgress } from '../egress/guarded-connector.js';
import { admitJob } from '../queue/admission.js';
import { createQueueConsumer, deleteQueueConsumer, getQueueConsumer, listQueueConsumers, queueConsumerConfig, runnableQueueConsumers, updateQueueConsumer } from '../queue/consumers.js';
import { QUEUE_CONSUMERS_CHANNEL } from '../queue/queue-port.js';
import { jobResult, queuedBacklog } from '../queue/results.js';
import { enqueueDelivery, getDelivery, listDeliveries, redeliver } from '../outbox/deliveries.js';
import { listSubscriptions, subscribe, unsubscribe } from '../outbox/subscriptions.js';
import { connectionView, createConnection, deleteConnection, listConnections, requireConnection } from '../models/connections.js';
import { admitSlackMessage, isKnownThread } from '../slack-bots/admission.js';
import { decideFromSlack } from '../slack-bots/approvals.js';
import { createSlackBot, deleteSlackBot, getSlackBot, listSlackBots, listSlackThreads, slackBotConfig, updateSlackBot } from '../slack-bots/bots.js';
import { leaseSlackSocket, releaseSlackSocket, socketSlackBots } from '../slack-bots/socket-lease.js';
import { claimSlackReplies, saveSlackReply } from '../slack-bots/streams.js';
import { createRemoteAgent, deleteRemoteAgent, listRemoteAgents, remoteAgentConnection, remoteAgentView, requireRemoteAgent } from '../remote-agents/remote-agents.js';
import { cancelResponse, decideApproval, submitInput, submitToolOutputs } from '../responses/actions.js';
import { admitResponse } from '../responses/admission.js';
import { deleteResponse } from '../responses/deletion.js';
import { countResponses, findAwaitingOutputs, listResponses, requireResponse, responseState } from '../responses/responses.js';
import { waitUntilSettled } from '../responses/settle.js';
import {
  addSessionItems,
  createSession,
  deleteSession,
  deleteSessionItem,
  listSessionItems,
  requireSession,
  requireSessionItem,
  updateSessionMetadata,
} from '../sessions/sessions.js';
import { migrationStatus } from '../store/migrate.js';
import { getEndpointDelivery, listEndpointDeliveries, recordAttempt, replayDeliveries, resendDelivery, testEndpoint } from '../webhooks/deliveries.js';
import {
  createEndpoint,
  deleteEndpoint,
  disableEndpoint,
  endpointView,
  listEndpoints,
  requireEndpoint,
  rotateSecret,
  signingTarget,
  updateEndpoint,
} from '../webhooks/endpoints.js';
import type { KernelApi } from './kernel-api.js';

export function createKernelApi(kernel: Kernel): KernelApi {
  const { db, config } = kernel;
  /** A response of the project, or not-found: checked before reading its journal. */
  const owned = async (projectId: string, responseId: string) => (await requireResponse(db, projectId, responseId)).id;
  return {
    config,
    logger: kernel.logger,
    metrics: kernel.metrics,
    lifecycle: kernel.lifecycle,
    inbox: kernel.inbox,

    authenticate: (apiKey) => authenticate(db, apiKey),

    agents: {
      create: (projectId, request, options) => createAgent(db, projectId, request, options?.idempotency, { secrets: kernel.secrets, policy: config }),
      get: async (projectId, ref) => agentView(await requireAgent(db, projectId, ref)),
      list: (projectId, page) => listAgents(db, projectId, page),
      update: async (projectId, ref, request, options) =>
        (await updateAgent(db, projectId, ref, request, options?.idempotency, { secrets: kernel.secrets, policy: config })).agent,
      revisions: (projectId, ref, page) => listRevisions(db, projectId, ref, page),
      projectOf: (agentId) => projectOfAgent(db, agentId),
    },

    sessions: {
      create: (projectId, request, options) => createSession(db, projectId, request, options?.idempotency),
      get: (projectId, sessionId) => requireSession(db, projectId, sessionId),
      delete: (projectId, sessionId) => deleteSession(db, projectId, sessionId),
      updateMetadata: (projectId, sessionId, metadata, options) => updateSessionMetadata(db, projectId, sessionId, metadata, options?.idempotency),
      items: (projectId, sessionId, page) => listSessionItems(db, projectId, sessionId, page),
      addItems: (projectId, sessionId, items, options) => addSessionItems(db, projectId, sessionId, items, options?.idempotency),
      item: (projectId, sessionId, itemId) => requireSessionItem(db, projectId, sessionId, itemId),
      deleteItem: (projectId, sessionId, itemId) => deleteSessionItem(db, projectId, sessionId, itemId),
    },

    connections: {
      create: (projectId, request, options) => createConnection(db, kernel.secrets, projectId, request, config.keyEnvAllowlist, options?.idempotency),
      get: async (projectId, ref) => connectionView(await requireConnection(db, projectId, ref)),
      list: (projectId, page) => listConnections(db, projectId, page),
      delete: (projectId, ref) => deleteConnection(db, kernel.secrets, projectId, ref),
    },

    remoteAgents: {
      create: (projectId, request, options) => createRemoteAgent(db, kernel.secrets, kernel.egress, projectId, request, options?.idempotency),
      get: async (projectId, ref) => remoteAgentView(await requireRemoteAgent(db, projectId, ref)),
      list: (projectId, page) => listRemoteAgents(db, projectId, page),
      delete: (projectId, ref) => deleteRemoteAgent(db, kernel.secrets, projectId, ref),
      connection: (projectId, ref) => remoteAgentConnection(db, kernel.secrets, projectId, ref),
    },

    mcpServers: createMcpServers({ db, secrets: kernel.secrets, stdioServers: config.mcpStdioServers, logger: kernel.logger.child({ component: 'mcp-servers' }) }),

    secrets: {
      put: (projectId, purpose, plaintext) => kernel.secrets.put(db, projectId, purpose, plaintext),
      reveal: (projectId, secretId) => kernel.secrets.reveal(db, projectId, secretId),
      remove: (projectId, secretId) => kernel.secrets.remove(db, projectId, secretId),
    },

    responses: {
      async admit(projectId, request, options) {
        const here = options?.runHere ? await kernel.localRuns?.admitHere(projectId, request, options.idempotency) : null;
        return responseState(here ?? (await admitResponse(db, projectId, request, options?.idempotency)));
      },
      get: async (projectId, responseId) => responseState(await requireResponse(db, projectId, responseId)),
      async list(projectId, { agent, ...filter }, page) {
        const agentId = agent === undefined ? undefined : (await requireAgent(db, projectId, agent)).id;
        const rows = await listResponses(db, projectId, { ...filter, agentId }, page);
        return { ...rows, data: rows.data.map(responseState) };
      },
      async count(projectId, { agent, ...filter }) {
        const agentId = agent === undefined ? undefined : (await requireAgent(db, projectId, agent)).id;
        return countResponses(db, projectId, { ...filter, agentId });
      },
      delete: (projectId, responseId) => deleteResponse(db, projectId, responseId),
      inputItems: async (projectId, responseId) => (await requireResponse(db, projectId, responseId)).input,
      cancel: async (projectId, responseId, options) => responseState(await cancelResponse(db, projectId, responseId, options?.idempotency)),
      submitToolOutputs: async (projectId, responseId, request, options) =>
        responseState(await submitToolOutputs(db, projectId, responseId, request, options?.idempotency)),
      decideApproval: async (projectId, responseId, request, options) =>
        responseState(await decideApproval(db, projectId, responseId, request, options?.idempotency)),
      submitInput: async (projectId, responseId, request, options) => responseState(await submitInput(db, projectId, responseId, request, options?.idempotency)),
      waitUntilSettled: async (projectId, responseId, timeoutMs, signal) => responseState(await waitUntilSettled(kernel, projectId, responseId, timeoutMs, signal)),
      async *follow(projectId, responseId, options) {
        yield* followEvents(db, kernel.wakeups, await owned(projectId, responseId), options);
      },
      async awaitingOutputs(projectId, callIds) {
        const row = await findAwaitingOutputs(db, projectId, callIds);
        return row && responseState(row);
      },
      lastSequence: async (projectId, responseId) => lastSequence(db, await owned(projectId, responseId)),
      events: async (projectId, responseId, after, limit) => readEvents(db, await owned(projectId, responseId), after, limit),
    },

    outbox: {
      subscribe: (input) => db.transaction((tx) => subscribe(tx, input)),
      unsubscribe: (projectId, id) => unsubscribe(db, projectId, id),
      subscriptions: (projectId, filter) => listSubscriptions(db, projectId, filter),
      enqueue: (input) => enqueueDelivery(db, input),
      deliveries: (projectId, filter) => listDeliveries(db, { ...filter, projectId }),
      delivery: (projectId, id) => getDelivery(db, id, projectId),
      redeliver: (projectId, id) => redeliver(db, id, projectId),
    },

    mcpSessions: createMcpSessions(db),

    queues: {
      create: (projectId, request, options) => createQueueConsumer(db, kernel.secrets, projectId, request, options?.idempotency),
      get: (projectId, ref) => getQueueConsumer(db, projectId, ref),
      list: (projectId, page) => listQueueConsumers(db, projectId, page),
      update: (projectId, ref, request) => updateQueueConsumer(db, projectId, ref, request),
      delete: (projectId, ref) => deleteQueueConsumer(db, kernel.secrets, projectId, ref),
      runnable: () => runnableQueueConsumers(db, kernel.secrets),
      config: (projectId, id) => queueConsumerConfig(db, kernel.secrets, projectId, id),
      onChange: (listener) => db.listen(QUEUE_CONSUMERS_CHANNEL, listener),
      admit: (consumer, message) => admitJob(db, kernel.inbox, consumer, message),
      result: (projectId, announcement) => jobResult(db, projectId, announcement),
      backlog: () => queuedBacklog(db),
    },

    slackBots: {
      create: (projectId, request, options) => createSlackBot(db, kernel.secrets, projectId, request, options?.idempotency),
      get: (projectId, ref) => getSlackBot(db, projectId, ref),
      list: (projectId, page) => listSlackBots(db, projectId, page),
      update: (projectId, ref, request) => updateSlackBot(db, kernel.secrets, projectId, ref, request),
      delete: (projectId, ref) => deleteSlackBot(db, kernel.secrets, projectId, ref),
      threads: (projectId, ref, page) => listSlackThreads(db, projectId, ref, page),
      config: (botId) => slackBotConfig(db, kernel.secrets, botId),
      admit: (bot, message) => admitSlackMessage(db, kernel.inbox, bot, message),
      knowsThread: (botId, message) => isKnownThread(db, botId, message),
      claimReplies: (owner, limit, leaseMs) => claimSlackReplies(db, owner, limit, leaseMs),
      saveReply: (responseId, owner, leaseMs, save) => saveSlackReply(db, responseId, owner, leaseMs, save),
      decide: (bot, decision) => decideFromSlack(db, bot, decision),
      socketBots: () => socketSlackBots(db),
      leaseSocket: (botId, owner, ttlMs) => leaseSlackSocket(db, botId, owner, ttlMs),
      releaseSocket: (botId, owner) => releaseSlackSocket(db, botId, owner),
    },

    webhooks: {
      create: (projectId, request, options) => createEndpoint(db, kernel.secrets, projectId, request, options?.idempotency),
      get: async (projectId, id) => endpointView(await requireEndpoint(db, projectId, id)),
      list: (projectId, page) => listEndpoints(db, projectId, page),
      update: (projectId, id, request) => updateEndpoint(db, projectId, id, request),
      delete: (projectId, id) => deleteEndpoint(db, kernel.secrets, projectId, id),
      rotateSecret: (projectId, id, request) => rotateSecret(db, kernel.secrets, projectId, id, request),
      deliveries: (projectId, id, page) => listEndpointDeliveries(db, projectId, id, page),
      delivery: (projectId, id, deliveryId) => getEndpointDelivery(db, projectId, id, deliveryId),
      resend: (projectId, id, deliveryId) => resendDelivery(db, projectId, id, deliveryId),
      replay: (projectId, id, request) => replayDeliveries(db, projectId, id, request),
      test: (projectId, id) => testEndpoint(db, projectId, id),
      signingTarget: (projectId, id) => signingTarget(db, kernel.secrets, projectId, id),
      recordAttempt: (report) => recordAttempt(db, report, config.webhookDisableAfterSeconds),
      disable: (projectId, id, reason) => disableEndpoint(db, projectId, id, reason),
    },

    egress: kernel.egress,
    egressSockets: socketEgress(config.egressAllowHosts),

    journal: {
      follow: (projectId, options) => followProjectEvents(db, kernel.wakeups, projectId, { ...options, pollMs: config.pollIntervalMs }),
      latest: (projectId) => latestCursor(db, projectId),
    },

    operator: {
      async readiness() {
        let status;
        try {
          status = await migrationStatus(db);
        } catch {
          throw new PalaiError('not-ready', 'The database cannot be reached.');
        }
        if (status.pending.length > 0) throw new PalaiError('not-ready', `${status.pending.length} migration(s) are not applied yet; run \`palai migrate\`.`);
        return { store: db.kind, migrations: status.applied };
      },
      metrics: async () => ({ contentType: kernel.metrics.registry.contentType, body: await kernel.metrics.registry.metrics() }),
    },
  };
}
