// Every agent of the caller's project is also an MCP prompt: a host offers it
// to its user, who fills in the arguments — the same ones the agent's tool
// takes (agent-tools.ts: `input`, and optionally the `session_id` to continue)
// — and the rendered messages ask the host's model to call that tool. With a
// session, its conversation comes along as an embedded resource.
import { ErrorCode, McpError, type GetPromptResult, type ListPromptsResult, type Prompt, type PromptMessage } from '@modelcontextprotocol/sdk/types.js';
import { unstorableText } from '../../core/api/index.js';
import type { McpSurfaceApi } from '../../core/surfaces/mcp/mcp-api.js';
import type { Agent } from '../../generated/schemas.js';
import { agentNamed, descriptionOf, INPUT_SCHEMA, parseArguments } from './agent-tools.js';
import { readResource, uriOf } from './resources.js';

const PROMPTS_PAGE_SIZE = 100;

/** The prompt's arguments: the tool's input schema, property by property. */
const ARGUMENTS: Prompt['arguments'] = Object.entries(INPUT_SCHEMA.properties).map(([name, schema]) => ({
  name,
  description: schema.description,
  required: (INPUT_SCHEMA.required as readonly string[]).includes(name),
}));

export const promptOf = (agent: Agent): Prompt => ({
  name: agent.name,
  ...(agent.metadata.mcp_title ? { title: agent.metadata.mcp_title } : {}),
  description: descriptionOf(agent),
  arguments: ARGUMENTS,
  _meta: { 'palai/agent_id': agent.id, 'palai/revision': agent.revision },
});

export async function listPrompts(api: McpSurfaceApi, projectId: string, cursor: string | undefined): Promise<ListPromptsResult> {
  const page = await api.agents.list(projectId, { limit: PROMPTS_PAGE_SIZE, after: cursor });
  return { prompts: page.data.map(promptOf), ...(page.has_more && page.last_id ? { nextCursor: page.last_id } : {}) };
}

export async function getPrompt(api: McpSurfaceApi, projectId: string, name: string, args: Record<string, string> | undefined): Promise<GetPromptResult> {
  const agent = await agentNamed(api, projectId, name);
  if (!agent) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}. The prompts are this project's agents; prompts/list lists them.`);
  const parsed = parseArguments(args);
  if (typeof parsed === 'string') throw new McpError(ErrorCode.InvalidParams, parsed);
  // Refused as the same arguments to the tool would be: the rendered call could never be made.
  const unstorable = unstorableText(parsed.input);
  if (unstorable) throw new McpError(ErrorCode.InvalidParams, `Argument "input" ${unstorable}.`);
  const messages: PromptMessage[] = [];
  if (parsed.sessionId) {
    const uri = uriOf({ kind: 'session', id: parsed.sessionId });
    const read = await readResource(api, projectId, uri).catch(() => {
      throw new McpError(ErrorCode.InvalidParams, `Unknown session: ${parsed.sessionId}.`);
    });
    messages.push({ role: 'user', content: { type: 'resource', resource: read.contents[0] as { uri: string; text: string; mimeType?: string } } });
  }
  const continuing = parsed.sessionId ? ` with "session_id": ${JSON.stringify(parsed.sessionId)} (the conversation above)` : '';
  messages.push({
    role: 'user',
    content: { type: 'text', text: `Call the tool ${JSON.stringify(agent.name)}${continuing} with this input:\n\n${parsed.input}` },
  });
  return { description: descriptionOf(agent), messages };
}
