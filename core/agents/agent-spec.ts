// Checks on an agent spec that a JSON Schema cannot express: the shape itself
// was already validated against the OpenAPI document at the edge.
import type { AgentSpecFields } from '../../generated/schemas.js';
import { PalaiError, type FieldError } from '../errors/palai-error.js';
import { schemaFieldError } from '../schemas/json-schema-drafts.js';
import { builtinTools } from '../tools/builtin/builtin-provider.js';

export function checkAgentSpec(spec: AgentSpecFields): void {
  const errors: FieldError[] = [];
  const unusable = spec.output_schema ? schemaFieldError(spec.output_schema, '/output_schema') : null;
  if (unusable) errors.push(unusable);
  const model = spec.model;
  if (model && model.provider !== 'fake' && model.script) {
    errors.push({ pointer: '/model/script', detail: 'is only for the fake provider' });
  }
  if (model && !model.connection && model.provider !== 'fake' && !model.name) {
    errors.push({ pointer: '/model/name', detail: `is required for provider ${model.provider} without a connection` });
  }
  const seen = new Set<string>();
  (spec.tools ?? []).forEach((tool, index) => {
    // An MCP server's or a node's tools are known when a run lists them; two entries may take different tools of one.
    if (tool.type === 'mcp' || tool.type === 'node') return;
    // A remote agent's tool is named after it.
    // An objective entry stands for the wake tools, which it may offer once.
    const name = tool.type === 'a2a' ? `a2a__${tool.remote_agent}` : tool.type === 'objective' ? 'schedule_wake' : tool.name;
    const field = tool.type === 'a2a' ? 'remote_agent' : tool.type === 'objective' ? 'type' : 'name';
    if (seen.has(name)) errors.push({ pointer: `/tools/${index}/${field}`, detail: `duplicate tool name ${JSON.stringify(name)}` });
    seen.add(name);
    // Built-ins are known without the kernel's tool registry, which is not reachable here.
    const problem = tool.type === 'builtin' ? builtinTools.validateSpec(tool) : null;
    if (problem) errors.push({ pointer: `/tools/${index}/name`, detail: problem });
    const parameters = tool.type === 'function' && tool.parameters ? schemaFieldError(tool.parameters, `/tools/${index}/parameters`) : null;
    if (parameters) errors.push(parameters);
  });
  if (errors.length > 0) throw new PalaiError('validation-failed', 'The agent spec is not usable.', { errors });
}
