// Binds the kernel API to one kernel: each member calls the core module that owns
// the operation, with the store and the wake-ups only the kernel holds.
import { createProjectSecret, deleteProjectSecret, listProjectSecrets } from '../secrets/project-secrets.js';
import { agentView, createAgent, listAgents, listRevisions, projectOfAgent, requireAgent, requireRevision, updateAgent } from '../agents/agents.js';
import { authenticate } from '../auth/api-keys.js';
import { checkRecalledKey, KeyMemory } from '../auth/recalled-keys.js';
import { PalaiError } from '../errors/palai-error.js';
import { followEvents, lastSequence, readEvents } from '../journal/journal.js';
import { followProjectEvents, latestCursor } from '../journal/project-feed.js';
import { createLeases } from '../leases/leases.js';
import { createSignals } from '../signals/signals.js';
import { answerParkedCall } from '../tools/answer-parked-call.js';
import type { Kernel } from '../kernel.js';
import { socketEgress } from '../egress/guarded-connector.js';
import { enqueueDelivery, getDelivery, listDeliveries, redeliver } from '../outbox/deliveries.js';
import { listSubscriptions, subscribe, unsubscribe } from '../outbox/subscriptions.js';
import { connectionView, createConnection, deleteConnection, listConnections, requireConnection } from '../models/connections.js';
import { cancelResponse, decideApproval, submitInput, submitToolOutputs } from '../responses/actions.js';
import { admitResponse, readsAgentFirst } from '../responses/admission.js';
import { deleteResponse } from '../responses/deletion.js';
import { countResponses, listResponses, requireResponse, responseState } from '../responses/responses.js';
import { answerTarget } from '../responses/answer-target.js';
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
import { atBoundary } from './boundary.js';
import type { KernelApi } from './kernel-api.js';

export function createKernelApi(kernel: Kernel): KernelApi {
  return atBoundary(bindKernelApi(kernel));
}

function bindKernelApi(kernel: Kernel): KernelApi {
  const { db, config } = kernel;
  /** A response of the project, or not-found: checked before reading its journal. */
  const keys = new KeyMemory();
  const owned = async (projectId: string, responseId: string) => (await requireResponse(db, projectId, responseId)).id;
  return {
    config,
    logger: kernel.logger,
    metrics: kernel.metrics,
    lifecycle: kernel.lifecycle,
    inbox: kernel.inbox,

    async authenticate(apiKey) {
      const principal = await authenticate(db, apiKey);
      if (principal) keys.remember(apiKey, principal.projectId, principal.keyId);
      return principal;
    },
    recallKey: (apiKey) => keys.recall(apiKey),
    checkKey: (key) => checkRecalledKey(db, key),

    agents: {
      create: (projectId, request, options) => createAgent(db, projectId, request, options?.idempotency, { secrets: kernel.secrets, policy: config }),
      get: async (projectId, ref) => agentView(await requireAgent(db, projectId, ref)),
      list: (projectId, page) => listAgents(db, projectId, page),
      update: async (projectId, ref, request, options) =>
        (await updateAgent(db, projectId, ref, request, options?.idempotency, { secrets: kernel.secrets, policy: config })).agent,
      revisions: (projectId, ref, page) => listRevisions(db, projectId, ref, page),
      revision: (projectId, revisionId) => requireRevision(db, projectId, revisionId),
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

    secrets: {
      put: (projectId, purpose, plaintext) => kernel.secrets.put(db, projectId, purpose, plaintext),
      reveal: (projectId, secretId) => kernel.secrets.reveal(db, projectId, secretId),
      remove: (projectId, secretId) => kernel.secrets.remove(db, projectId, secretId),
    },

    projectSecrets: {
      create: (projectId, request) => createProjectSecret(db, kernel.secrets, projectId, request.name, request.value),
      list: (projectId) => listProjectSecrets(db, projectId),
      delete: (projectId, ref) => deleteProjectSecret(db, kernel.secrets, projectId, ref),
    },

    responses: {
      async admit(projectId, command, options) {
        const here = options?.runHere ? await kernel.localRuns?.admitHere(projectId, command, options.idempotency, options.key) : null;
        return responseState(here ?? (await admitResponse(db, projectId, command, options?.idempotency, kernel.tools, options?.key, kernel.agents)));
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
      submitInput: async (projectId, responseId, request, options) =>
        responseState(await submitInput(db, projectId, responseId, request, options?.idempotency)),
      answerParkedCall: async (projectId, responseId, callId, answer, options) =>
        responseState(await answerParkedCall(db, projectId, responseId, callId, answer, options?.idempotency)),
      waitUntilSettled: async (projectId, responseId, timeoutMs, signal) =>
        responseState(await waitUntilSettled(kernel, projectId, responseId, timeoutMs, signal)),
      async *follow(projectId, responseId, options) {
        yield* followEvents(db, kernel.wakeups, await owned(projectId, responseId), options);
      },
      async answering(projectId, command, key) {
        if (key && !readsAgentFirst(command, undefined)) await checkRecalledKey(db, key);
        const target = await answerTarget(db, projectId, command, false);
        return target && responseState(target.row);
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
      redeliver: (projectId, id, options) => redeliver(db, id, projectId, options?.idempotency),
    },

    egress: kernel.egress,
    egressSockets: socketEgress(config.egressAllowHosts),

    journal: {
      follow: (projectId, options) => followProjectEvents(db, kernel.wakeups, projectId, { ...options, pollMs: config.pollIntervalMs }),
      latest: (projectId) => latestCursor(db, projectId),
    },

    leases: createLeases(db),
    signals: createSignals(db, kernel.logger.child({ component: 'signals' })),

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
