// Binds the nodes wing's slice to one kernel.
import { SecretUnavailableError, type SecretStore } from '../../secrets/secret-port.js';
import { atBoundary } from '../../api/boundary.js';
import type { Kernel } from '../../kernel.js';
import { admission, admit, markConnected, markDisconnected, markSeen } from './admission.js';
import { createEnrollment, listEnrollments, requireEnrollment, revokeEnrollment } from './enrollments.js';
import { claimDispatch, invocationsToCancel, markAccepted, purgeLedger, recordResult, sweepLedger } from './invocation-ledger.js';
import { cancelInvocationView, countInvocations, getInvocation, listInvocations } from './invocation-queries.js';
import { callOutcome, nodeTools, prepareCall, revealSecretEnv } from './invocations.js';
import { approveNode, countNodes, denyNode, listNodes, requireNode, revokeNode } from './nodes.js';
import type { NodesApi } from './nodes-api.js';
import { enrollmentView, nodeView } from './node-views.js';

/** What PALAI_NODE_LEDGER_RETENTION_HOURS defaults to, for the commands that bind the wing without a config. */
const DEFAULT_LEDGER_RETENTION_HOURS = 7 * 24;

/** For the commands that bind the wing without the kernel's store: a secret environment cannot be bound or revealed there. */
const NO_SECRET_STORE: SecretStore = {
  put: () => Promise.reject(new SecretUnavailableError('no-secret-key', 'This command cannot store secrets.')),
  reveal: (_q, _projectId, id) => Promise.reject(new SecretUnavailableError('missing', `Secret ${id} cannot be read here.`)),
  replace: (_q, _projectId, id) => Promise.reject(new SecretUnavailableError('missing', `Secret ${id} cannot be read here.`)),
  remove: async () => false,
  serverKey: () => undefined,
};

export function createNodesApi({ db, config, secrets }: Pick<Kernel, 'db'> & Partial<Pick<Kernel, 'config' | 'secrets'>>): NodesApi {
  const store = secrets ?? NO_SECRET_STORE;
  const retentionHours = config?.nodeLedgerRetentionHours ?? DEFAULT_LEDGER_RETENTION_HOURS;
  return atBoundary({
    nodeEnrollments: {
      create: (projectId, request, options) => createEnrollment(db, projectId, request, options?.idempotency),
      get: async (projectId, id) => enrollmentView(await requireEnrollment(db, projectId, id)),
      list: (projectId, page) => listEnrollments(db, projectId, page),
      revoke: (projectId, id) => revokeEnrollment(db, projectId, id),
    },
    nodes: {
      list: (projectId, query) => listNodes(db, projectId, query),
      get: async (projectId, ref) => nodeView(await requireNode(db, projectId, ref)),
      approve: (projectId, ref, request) => approveNode(db, projectId, ref, request),
      deny: (projectId, ref) => denyNode(db, projectId, ref),
      revoke: (projectId, ref, request) => revokeNode(db, projectId, ref, request),
      invocations: (projectId, ref, page) => listInvocations(db, projectId, ref, page),
      counts: () => countNodes(db),
    },
    nodeInvocations: {
      get: (projectId, id) => getInvocation(db, projectId, id),
      cancel: (projectId, id) => cancelInvocationView(db, projectId, id),
      counts: () => countInvocations(db),
    },
    nodeGateway: {
      admit: (proof, token) => admit(db, proof, token),
      admission: (nodeId) => admission(db, nodeId),
      connected: (nodeId) => markConnected(db, nodeId),
      seen: (nodeId) => markSeen(db, nodeId),
      disconnected: (nodeId, reason) => markDisconnected(db, nodeId, reason),
      claimDispatch: (nodeIds, holder, options) => claimDispatch(db, nodeIds, holder, options),
      accepted: (nodeId, invocationId) => markAccepted(db, nodeId, invocationId),
      finished: (nodeId, result) => recordResult(db, nodeId, result),
      toCancel: (nodeIds) => invocationsToCancel(db, nodeIds),
      sweep: () => sweepLedger(db),
      purge: () => purgeLedger(db, retentionHours),
      secretEnv: (invocationId) => revealSecretEnv(db, store, invocationId),
    },
    nodeCalls: {
      tools: (projectId, ref) => nodeTools(db, projectId, ref),
      prepare: (projectId, call) => prepareCall(db, store, projectId, call),
      outcome: (invocationId) => callOutcome(db, invocationId),
    },
  });
}
