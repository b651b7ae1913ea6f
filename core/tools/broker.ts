// The tool broker: turns an agent spec's tool list into runnable tools, and
// decides which calls need a human (the agent's approval policy).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { AgentSpecFields, ToolSpec } from '../../generated/schemas.js';
import { BUILTIN_TOOLS, type BuiltinDeps } from './builtin/registry.js';
import type { ResolvedTool } from './tool-port.js';

const argumentCompiler = new Ajv2020({ strict: false, allErrors: true });
const validators = new WeakMap<object, ValidateFunction>();

function resolve(spec: ToolSpec, deps: BuiltinDeps): ResolvedTool {
  if (spec.type === 'builtin') {
    const builtin = BUILTIN_TOOLS.get(spec.name);
    if (!builtin) throw new Error(`unknown built-in tool ${spec.name}`);
    return {
      name: builtin.name,
      kind: 'builtin',
      description: builtin.description,
      parameters: builtin.parameters,
      risk: spec.risk ?? builtin.risk,
      validateArguments: true,
      run: (args, context) => builtin.run(args, context, deps),
    };
  }
  return {
    name: spec.name,
    kind: 'function',
    description: spec.description ?? '',
    parameters: (spec.parameters as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
    risk: spec.risk ?? 'read',
    // The caller runs client-side functions; their arguments are checked only under `strict`.
    validateArguments: spec.strict === true && spec.parameters !== undefined,
    run: async () => ({ kind: 'await_client' }),
  };
}

export function resolveTools(spec: AgentSpecFields, deps: BuiltinDeps): Map<string, ResolvedTool> {
  return new Map((spec.tools ?? []).map((tool) => [tool.name, resolve(tool, deps)]));
}

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
  const policy = spec.approval;
  if (!policy) return false;
  return (policy.tools ?? []).includes(tool.name) || (policy.risks ?? []).includes(tool.risk as 'write' | 'privileged');
}
