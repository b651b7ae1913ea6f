// /v1/remote_agents: the project's remote A2A agents. Header values are
// write-only: an answer shows each header's name, whether it is set, and its
// last four characters.
import type { SurfaceOperations } from '../../core/api/surface.js';
import type { A2aApi } from '../../core/surfaces/a2a/a2a-api.js';

export function remoteAgentOperations({ remoteAgents }: A2aApi): SurfaceOperations {
  return {
    createRemoteAgent: async ({ projectId, body, idempotency }) => ({ status: 201, body: await remoteAgents.create(projectId, body, { idempotency }) }),
    listRemoteAgents: async ({ projectId, query }) => ({ body: await remoteAgents.list(projectId, query) }),
    getRemoteAgent: async ({ projectId, params }) => ({ body: await remoteAgents.get(projectId, params.remote_agent) }),
    deleteRemoteAgent: async ({ projectId, params }) => {
      const id = await remoteAgents.delete(projectId, params.remote_agent);
      return { body: { id, object: 'remote_agent.deleted', deleted: true } };
    },
  };
}
