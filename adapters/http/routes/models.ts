// OpenAI's Models API over the project's agents: a chat UI or framework that
// lists models to offer finds each agent under the name `model` takes.
import type { KernelApi } from '../../../core/api/index.js';
import type { Agent, Model } from '../../../generated/schemas.js';
import type { OperationHandlers } from '../operations.js';

const modelOf = (agent: Agent, projectId: string): Model => ({
  id: agent.name,
  object: 'model',
  created: agent.created_at,
  owned_by: projectId,
  agent_id: agent.id,
});

/** Largest page the agents list serves. */
const PAGE = 100;

export function modelHandlers({ agents }: KernelApi): OperationHandlers {
  return {
    listModels: async (_req, res, { projectId }) => {
      const data: Model[] = [];
      for (let after: string | undefined; ;) {
        const page = await agents.list(projectId, { limit: PAGE, after });
        data.push(...page.data.map((agent) => modelOf(agent, projectId)));
        if (!page.has_more || page.last_id === null) break;
        after = page.last_id;
      }
      res.json({ object: 'list', data });
    },
    getModel: async (_req, res, { projectId, params }) => {
      res.json(modelOf(await agents.get(projectId, params.model), projectId));
    },
  };
}
