// The tool broker's rules for a call the model made: whether its arguments fit
// the tool's schema, and whether it waits for a human (the agent's approval
// policy). Which tools an agent has is the ToolRegistry's answer.
import type { AgentSpecFields } from '../../generated/schemas.js';
import { compileSchema } from '../schemas/json-schema-drafts.js';
import type { ResolvedTool } from './tool-port.js';

/** Null when the arguments satisfy the tool's schema (under its own draft), else what is wrong. */
export function argumentProblems(tool: ResolvedTool, args: unknown): string | null {
  if (!tool.validateArguments) return null;
  const compiled = compileSchema(tool.argumentSchema ?? tool.parameters);
  // Refused when the agent or the request was written; only a schema stored before that can get here.
  if ('problem' in compiled) return `the tool's parameters schema ${compiled.problem}`;
  const { validate } = compiled;
  if (validate(args)) return null;
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(arguments)'} ${e.message}`).join('; ');
}

/** A call's arguments as the model sent them, or undefined when they do not parse (such a call runs nothing). */
export function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function needsApproval(spec: AgentSpecFields, tool: ResolvedTool, args?: unknown): boolean {
  // What the tool's own party requires for this call (a node operator's rule) holds over every other.
  if (tool.approvalOf && args !== undefined && tool.approvalOf(args)) return true;
  if (tool.approval !== undefined) return tool.approval === 'always';
  const policy = spec.approval;
  if (!policy) return false;
  return (policy.tools ?? []).includes(tool.name) || (policy.risks ?? []).includes(tool.risk as 'write' | 'privileged');
}
