import type { KernelApi } from '../../../core/api/index.js';
import type { OperationHandlers } from '../operations.js';

export function agentHandlers({ agents }: KernelApi): OperationHandlers {
  return {
    createAgent: async (_req, res, { projectId, body, idempotency }) => {
      res.status(201).json(await agents.create(projectId, body, { idempotency }));
    },
    listAgents: async (_req, res, { projectId, query }) => {
      res.json(await agents.list(projectId, query));
    },
    getAgent: async (_req, res, { projectId, params }) => {
      res.json(await agents.get(projectId, params.agent));
    },
    updateAgent: async (_req, res, { projectId, params, body, idempotency }) => {
      res.json(await agents.update(projectId, params.agent, body, { idempotency }));
    },
    listAgentRevisions: async (_req, res, { projectId, params, query }) => {
      res.json(await agents.revisions(projectId, params.agent, query));
    },
  };
}
