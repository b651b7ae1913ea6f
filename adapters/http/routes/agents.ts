import { createAgent, listAgents, listRevisions, requireAgent, agentView, updateAgent } from '../../../core/agents/agents.js';
import type { Kernel } from '../../../core/kernel.js';
import type { OperationHandlers } from '../operations.js';

export function agentHandlers({ db }: Kernel): OperationHandlers {
  return {
    createAgent: async (_req, res, { projectId, body, idempotency }) => {
      res.status(201).json(await createAgent(db, projectId, body, idempotency));
    },
    listAgents: async (_req, res, { projectId, query }) => {
      res.json(await listAgents(db, projectId, query));
    },
    getAgent: async (_req, res, { projectId, params }) => {
      res.json(agentView(await requireAgent(db, projectId, params.agent)));
    },
    updateAgent: async (_req, res, { projectId, params, body, idempotency }) => {
      res.json((await updateAgent(db, projectId, params.agent, body, idempotency)).agent);
    },
    listAgentRevisions: async (_req, res, { projectId, params, query }) => {
      res.json(await listRevisions(db, projectId, params.agent, query));
    },
  };
}
