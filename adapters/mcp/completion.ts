// completion/complete: what a host may offer while its user fills in a
// prompt's or a resource template's argument — the project's session ids for
// `session_id`, its response ids for `response_id`, its agent names for an
// argument named `agent`. Completion is a suggestion: an argument Palai has
// nothing to offer for (a free-text `input`, a name it does not serve) gets no
// values rather than an error.
import type { CompleteRequest, CompleteResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpSurfaceApi } from '../../core/surfaces/mcp/mcp-api.js';
import type { McpResourceKind } from '../../core/surfaces/mcp/mcp-resources-port.js';
import { RESOURCE_TEMPLATES, TEMPLATE_ARGUMENT } from './resources.js';

const NOTHING: CompleteResult = { completion: { values: [], hasMore: false } };

const KIND_OF_ARGUMENT = new Map<string, McpResourceKind>(
  (Object.entries(TEMPLATE_ARGUMENT) as [McpResourceKind, string][]).map(([kind, argument]) => [argument, kind]),
);

/** The kinds of id an argument of this ref takes, or null when it takes none Palai completes. */
function targetOf(ref: CompleteRequest['params']['ref'], argument: string): McpResourceKind | 'agent' | null {
  if (ref.type === 'ref/resource' && !RESOURCE_TEMPLATES.some((template) => template.uriTemplate === ref.uri)) return null;
  if (argument === 'agent') return 'agent';
  return KIND_OF_ARGUMENT.get(argument) ?? null;
}

export async function complete(api: McpSurfaceApi, projectId: string, params: CompleteRequest['params']): Promise<CompleteResult> {
  const target = targetOf(params.ref, params.argument.name);
  if (!target) return NOTHING;
  const prefix = params.argument.value;
  const found =
    target === 'agent' ? await api.mcpResources.completeAgentNames(projectId, prefix) : await api.mcpResources.completeIds(projectId, target, prefix);
  return { completion: { values: found.values, hasMore: found.hasMore } };
}
