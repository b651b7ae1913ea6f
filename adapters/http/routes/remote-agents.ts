// /v1/remote_agents: the project's remote A2A agents. Header values are
// write-only: an answer shows each header's name, whether it is set, and its
// last four characters.
import type { KernelApi } from '../../../core/api/index.js';
import type { OperationHandlers } from '../operations.js';

export function remoteAgentHandlers({ remoteAgents }: KernelApi): OperationHandlers {
  return {
    createRemoteAgent: async (_req, res, { projectId, body, idempotency }) => {
      res.status(201).json(await remoteAgents.create(projectId, body, { idempotency }));
    },
    listRemoteAgents: async (_req, res, { projectId, query }) => {
      res.json(await remoteAgents.list(projectId, query));
    },
    getRemoteAgent: async (_req, res, { projectId, params }) => {
      res.json(await remoteAgents.get(projectId, params.remote_agent));
    },
    deleteRemoteAgent: async (_req, res, { projectId, params }) => {
      const id = await remoteAgents.delete(projectId, params.remote_agent);
      res.json({ id, object: 'remote_agent.deleted', deleted: true });
    },
  };
}
