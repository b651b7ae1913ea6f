// Every agent of the caller's project is one MCP tool: the tool's name is the
// agent's name, its input is the text to give the agent (and optionally the
// Palai session to continue), its output schema is the agent's own when the
// agent has an object-shaped one. Annotations are hints derived from the
// agent's tools' risks, which agent metadata may override.
import type { Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import type { McpSurfaceApi } from '../../core/surfaces/mcp/mcp-api.js';
import type { Agent } from '../../generated/schemas.js';

/** The longest `input` a call may carry: the REST API's own limit for a string input. */
const MAX_INPUT_CHARS = 1_048_576;
const MAX_SESSION_ID_CHARS = 128;

export const INPUT_SCHEMA = {
  type: 'object',
  properties: {
    input: { type: 'string', minLength: 1, maxLength: MAX_INPUT_CHARS, description: 'What to ask or tell the agent.' },
    session_id: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_SESSION_ID_CHARS,
      description: 'A Palai session (ses_…) to continue; without it the call is a conversation of its own.',
    },
  },
  required: ['input'],
  additionalProperties: false,
} as const satisfies Tool['inputSchema'];

/** Agent metadata keys that set a tool's annotations ("true" / "false"), and its title. */
const HINT_KEYS = {
  mcp_read_only_hint: 'readOnlyHint',
  mcp_destructive_hint: 'destructiveHint',
  mcp_idempotent_hint: 'idempotentHint',
  mcp_open_world_hint: 'openWorldHint',
} as const;
const TITLE_KEY = 'mcp_title';

/** MCP wants an object-shaped output schema; any other is not advertised (the answer is then text only). */
export function outputSchemaOf(agent: Agent): Tool['outputSchema'] | undefined {
  const schema = agent.output_schema as Record<string, unknown> | undefined;
  return schema && schema.type === 'object' ? (schema as Tool['outputSchema']) : undefined;
}

function annotationsOf(agent: Agent): ToolAnnotations {
  // An MCP server's tools have the risks their server annotates, unknown here: they count as undeclared.
  const risks = (agent.tools ?? []).map((tool) => ('risk' in tool ? tool.risk : undefined));
  const annotations: ToolAnnotations = {
    // A tool without a declared risk may write: only all-`read` tools make the agent read-only.
    readOnlyHint: risks.every((risk) => risk === 'read'),
    destructiveHint: risks.some((risk) => risk === 'privileged'),
    // Every call is a new run: the same input may well give another answer.
    idempotentHint: false,
    openWorldHint: risks.length > 0,
  };
  for (const [key, hint] of Object.entries(HINT_KEYS)) {
    const value = agent.metadata[key];
    if (value === 'true' || value === 'false') annotations[hint] = value === 'true';
  }
  const title = agent.metadata[TITLE_KEY];
  if (title) annotations.title = title;
  return annotations;
}

/** The agent a tool or prompt name refers to, or null when the project has none by that name. */
export async function agentNamed(api: McpSurfaceApi, projectId: string, name: string): Promise<Agent | null> {
  try {
    return await api.agents.get(projectId, name);
  } catch (error) {
    if (isPalaiError(error) && error.slug === 'agent-not-found') return null;
    throw error;
  }
}

export const descriptionOf = (agent: Agent): string => agent.description ?? `The Palai agent ${agent.name}.`;

export function toolOf(agent: Agent): Tool {
  const outputSchema = outputSchemaOf(agent);
  const title = agent.metadata[TITLE_KEY];
  return {
    name: agent.name,
    ...(title ? { title } : {}),
    description: descriptionOf(agent),
    inputSchema: INPUT_SCHEMA,
    ...(outputSchema ? { outputSchema } : {}),
    annotations: annotationsOf(agent),
    // A call may run as long as the agent needs: a host may ask for a task and poll.
    execution: { taskSupport: 'optional' },
    _meta: { 'palai/agent_id': agent.id, 'palai/revision': agent.revision },
  };
}

export interface ToolArguments {
  input: string;
  sessionId?: string;
}

/** The call's arguments, or what is wrong with them (said so the model that called can fix it). */
export function parseArguments(args: Record<string, unknown> | undefined): ToolArguments | string {
  const given = args ?? {};
  const unknown = Object.keys(given).filter((key) => key !== 'input' && key !== 'session_id');
  if (unknown.length > 0)
    return `Unknown argument(s) ${unknown.map((k) => JSON.stringify(k)).join(', ')}: the tool takes "input" and, optionally, "session_id".`;
  const { input, session_id: sessionId } = given;
  if (typeof input !== 'string' || input.length === 0) return 'Argument "input" is required: a non-empty string.';
  if (input.length > MAX_INPUT_CHARS) return `Argument "input" is longer than ${MAX_INPUT_CHARS} characters.`;
  if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId.length === 0 || sessionId.length > MAX_SESSION_ID_CHARS)) {
    return `Argument "session_id" must be a Palai session id (a string of 1 to ${MAX_SESSION_ID_CHARS} characters).`;
  }
  return sessionId === undefined ? { input } : { input, sessionId: sessionId as string };
}
