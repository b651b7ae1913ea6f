// Binds the A2A wing's slice to one kernel.
import { atBoundary } from '../../api/boundary.js';
import type { Kernel } from '../../kernel.js';
import { declareInboxSource } from '../../idempotency/inbox-sources.js';
import type { A2aApi } from './a2a-api.js';
import { createRemoteAgent, deleteRemoteAgent, listRemoteAgents, remoteAgentConnection, remoteAgentView, requireRemoteAgent } from './remote-agents.js';

/** A2A messages in the inbox, keyed by their messageId and a digest of the message (request-handler.ts). */
export const A2A_INBOX_SOURCE = declareInboxSource('a2a', 'messageId');

export function createA2aApi({ db, secrets, egress }: Kernel): A2aApi {
  return atBoundary({
    remoteAgents: {
      create: (projectId, request, options) => createRemoteAgent(db, secrets, egress, projectId, request, options?.idempotency),
      get: async (projectId, ref) => remoteAgentView(await requireRemoteAgent(db, projectId, ref)),
      list: (projectId, page) => listRemoteAgents(db, projectId, page),
      delete: (projectId, ref) => deleteRemoteAgent(db, secrets, projectId, ref),
      connection: (projectId, ref) => remoteAgentConnection(db, secrets, projectId, ref),
    },
  });
}
