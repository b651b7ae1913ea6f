// /v1/node_enrollments, /v1/nodes and /v1/node_invocations: enrollment tokens
// (shown once, in the answer that makes one), paired nodes and their ledger.
import type { SurfaceOperations } from '../../core/api/surface.js';
import type { NodesApi } from '../../core/surfaces/nodes/nodes-api.js';

export function nodeOperations({ nodeEnrollments, nodes, nodeInvocations }: NodesApi): SurfaceOperations {
  return {
    createNodeEnrollment: async ({ projectId, body, idempotency, replay }) => {
      // A repeat answers with the enrollment as it is now: the token is shown once.
      if (replay) return { status: 201, body: await nodeEnrollments.get(projectId, replay.resourceId) };
      return { status: 201, body: await nodeEnrollments.create(projectId, body ?? {}, { idempotency }) };
    },
    listNodeEnrollments: async ({ projectId, query }) => ({ body: await nodeEnrollments.list(projectId, query) }),
    revokeNodeEnrollment: async ({ projectId, params }) => ({ body: await nodeEnrollments.revoke(projectId, params.enrollment) }),
    listNodes: async ({ projectId, query }) => ({ body: await nodes.list(projectId, query) }),
    getNode: async ({ projectId, params }) => ({ body: await nodes.get(projectId, params.node) }),
    approveNode: async ({ projectId, params, body }) => ({ body: await nodes.approve(projectId, params.node, body) }),
    denyNode: async ({ projectId, params }) => ({ body: await nodes.deny(projectId, params.node) }),
    revokeNode: async ({ projectId, params, body }) => ({ body: await nodes.revoke(projectId, params.node, body ?? {}) }),
    listNodeInvocations: async ({ projectId, params, query }) => ({ body: await nodes.invocations(projectId, params.node, query) }),
    getNodeInvocation: async ({ projectId, params }) => ({ body: await nodeInvocations.get(projectId, params.invocation) }),
    cancelNodeInvocation: async ({ projectId, params }) => ({ body: await nodeInvocations.cancel(projectId, params.invocation) }),
  };
}
