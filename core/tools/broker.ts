// The tool broker's rules for a call the model made: whether its arguments fit
// the tool's schema, and whether it waits for a human (the agent's approval
// policy). Which tools an agent has is the ToolRegistry's answer.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { AgentSpecFields } from '../../generated/schemas.js';
import type { ResolvedTool } from './tool-port.js';

const argumentCompiler = new Ajv2020({ strict: false, allErrors: true });
// Keyed by the schema object: a built-in's schema is compiled once per process.
const validators = new WeakMap<object, ValidateFunction>();

/** Null when the arguments satisfy the tool's schema, else what is wrong. */
export function argumentProblems(tool: ResolvedTool, args: unknown): string | null {
  if (!tool.validateArguments) return null;
  let validate = validators.get(tool.parameters);
  if (!validate) {
    validate = argumentCompiler.compile(tool.parameters);
    validators.set(tool.parameters, validate);
  }
  if (validate(args)) return null;
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(arguments)'} ${e.message}`).join('; ');
}

export function needsApproval(spec: AgentSpecFields, tool: ResolvedTool): boolean {
  if (tool.approval !== undefined) return tool.approval === 'always';
  const policy = spec.approval;
  if (!policy) return false;
  return (policy.tools ?? []).includes(tool.name) || (policy.risks ?? []).includes(tool.risk as 'write' | 'privileged');
}
