// Whether a task's answer is structured (a data part): the output schema of the
// agent revision the response ran, which may be older than the agent's current one.
import type { ResponseState } from '../../core/api/index.js';
import type { A2aSurfaceApi } from '../../core/surfaces/a2a/a2a-api.js';
import type { Agent } from '../../generated/schemas.js';

export async function isStructured(api: A2aSurfaceApi, projectId: string, agent: Agent, state: ResponseState): Promise<boolean> {
  if (state.agent.revision_id === agent.revision_id) return agent.output_schema !== undefined;
  return (await api.agents.revision(projectId, state.agent.revision_id)).spec.output_schema !== undefined;
}
