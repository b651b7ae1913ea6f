// How a task's answer is shown: `text` (a text part, streamed as it grows),
// `data` (the agent has an output schema: its JSON as a data part, once the
// task completes) or `parts` (the agent's metadata says a2a_answer=parts: an
// answer that is an A2A parts object, {"parts": [...], "reply"?: "message"},
// becomes those parts — files, data, text — and with "reply": "message"
// SendMessage answers with a Message; any other answer is text). The output
// schema is the agent revision's the response ran, which may be older than the
// agent's current one.
import type { ResponseState } from '../../core/api/index.js';
import type { A2aSurfaceApi } from '../../core/surfaces/a2a/a2a-api.js';
import type { Agent } from '../../generated/schemas.js';

export type AnswerShape = 'text' | 'data' | 'parts';

/** The agent metadata key (value `parts`) that makes its answers A2A parts objects. */
export const ANSWER_SHAPE_KEY = 'a2a_answer';

export async function answerShape(api: A2aSurfaceApi, projectId: string, agent: Agent, state: ResponseState): Promise<AnswerShape> {
  const outputSchema =
    state.agent.revision_id === agent.revision_id ? agent.output_schema : (await api.agents.revision(projectId, state.agent.revision_id)).spec.output_schema;
  if (outputSchema !== undefined) return 'data';
  return agent.metadata?.[ANSWER_SHAPE_KEY] === 'parts' ? 'parts' : 'text';
}
