// The node's local policy over one plan's input: the config, not the hub, says
// what may run. An input that breaks the protocol's limits is an INVALID_PLAN;
// one that asks for what the operator did not allow (a command, a scope, an
// alias, an environment name) is COMMAND_DENIED. Messages name no path and no
// value, only what the model sent as names.
import type { NodeExecutionPlan, NodeFailure } from '../../../generated/protocol-schemas.js';
import {
  ShellExecInput,
  SystemExecInput,
  WorkspacePatchInput,
  WorkspaceReadInput,
  WorkspaceSearchInput,
  WorkspaceWriteInput,
} from '../../../generated/protocol-validators.js';
import type { NodeCatalog } from '../../../generated/schemas.js';
import { MAX_ENV_BYTES, MAX_INPUT_BYTES, MAX_SCRIPT_BYTES } from '../../../core/surfaces/nodes/wire/limits.js';
import {
  COMMAND_RISK,
  profilesFor,
  riskWithin,
  SHELL_EXEC,
  SYSTEM_EXEC,
  WORKSPACE_COMMANDS,
  WORKSPACE_PATCH,
  WORKSPACE_READ,
  WORKSPACE_SEARCH,
} from './catalog.js';
import type { CompanionConfig, CompanionFileProfile } from './config.js';

/** What to spawn, once the policy allowed it. */
export interface RunSpec {
  file: string;
  args: string[];
  cwd: string;
  /** Only the names the command set, over the minimal base (exec.ts). */
  env: Record<string, string>;
  timeoutMs: number;
  outputLimitBytes: number;
}

/** A workspace command to run in the companion itself, once the policy allowed it. */
export interface WorkspaceSpec {
  command: string;
  profile: CompanionFileProfile;
  input: Record<string, unknown>;
  outputLimitBytes: number;
}

export type PolicyVerdict = { ok: true; spec: RunSpec } | { ok: true; workspace: WorkspaceSpec } | { ok: false; failure: NodeFailure };

interface ExecInput {
  script?: string;
  executable?: string;
  args?: string[];
  working_scope?: string;
  env?: Record<string, string>;
  timeout_seconds?: number;
}

const deny = (message: string): PolicyVerdict => ({ ok: false, failure: { code: 'COMMAND_DENIED', message } });
const invalid = (message: string): PolicyVerdict => ({ ok: false, failure: { code: 'INVALID_PLAN', message } });
const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');
/** The names the model may use, never what it sent (which may be a path or a value of the node). */
const oneOf = (names: Iterable<string>): string => {
  const list = [...names].join(', ');
  return list ? `one of: ${list.length > 300 ? `${list.slice(0, 300)}…` : list}` : 'none are offered';
};

export interface PolicyContext {
  config: CompanionConfig;
  catalog: NodeCatalog;
  /** What the hub last said was approved. */
  approvedCommands: readonly string[];
  /** Where a command runs when the node has no working scope. */
  defaultDirectory: string;
}

export function authorize(plan: NodeExecutionPlan, context: PolicyContext): PolicyVerdict {
  const { config, catalog } = context;
  const { policy, shell } = config;
  const risk = COMMAND_RISK[plan.command];
  if (!risk || !policy.allowedCommands.includes(plan.command)) return deny(`the node's policy does not allow ${plan.command}`);
  if (!riskWithin(risk, policy.maximumRisk)) return deny(`${plan.command} is ${risk}, over the node's maximum risk ${policy.maximumRisk}`);
  if (!catalog.commands.some((d) => d.name === plan.command)) return deny(`${plan.command} is not in the node's catalog`);
  if (!context.approvedCommands.includes(plan.command)) return deny(`${plan.command} is not approved for this node`);

  if (bytes(JSON.stringify(plan.input)) > MAX_INPUT_BYTES) return invalid(`the input is over ${MAX_INPUT_BYTES} bytes`);
  if (WORKSPACE_COMMANDS.includes(plan.command)) return authorizeWorkspace(plan, config);
  const validate = plan.command === SHELL_EXEC ? ShellExecInput : SystemExecInput;
  if (!validate(plan.input)) {
    const first = validate.errors?.[0];
    return invalid(`the input does not fit ${plan.command}: ${first?.instancePath || '(input)'} ${first?.message ?? 'is invalid'}`.slice(0, 512));
  }
  const input = plan.input as ExecInput;
  if (input.script !== undefined && bytes(input.script) > MAX_SCRIPT_BYTES) return invalid(`the script is over ${MAX_SCRIPT_BYTES} bytes`);
  const texts = [input.script ?? '', ...(input.args ?? []), ...Object.values(input.env ?? {})];
  if (texts.some((t) => t.includes('\u0000'))) return invalid('the input holds a NUL character, which no process argument or variable can');

  const env = input.env ?? {};
  for (const name of Object.keys(env)) {
    if (!shell.environmentNames.includes(name)) return deny(`an environment name is not one the node allows (${oneOf(shell.environmentNames)})`);
  }
  const envBytes = Object.entries(env).reduce((sum, [name, value]) => sum + bytes(name) + 1 + bytes(value), 0);
  if (envBytes > MAX_ENV_BYTES) return invalid(`the environment is over ${MAX_ENV_BYTES} bytes`);

  let cwd = context.defaultDirectory;
  if (input.working_scope !== undefined) {
    const dir = shell.workingScopes.get(input.working_scope);
    if (dir === undefined) return deny(`the working scope is not one of the node's (${oneOf(shell.workingScopes.keys())})`);
    cwd = dir;
  } else if (shell.workingScopes.size > 0) {
    cwd = shell.workingScopes.values().next().value!;
  }

  if (input.timeout_seconds !== undefined && input.timeout_seconds > policy.maxTimeoutSeconds) {
    return deny(`the timeout is over the node's maximum of ${policy.maxTimeoutSeconds} s`);
  }
  const timeoutSeconds = Math.min(input.timeout_seconds ?? plan.timeout_seconds, plan.timeout_seconds, policy.maxTimeoutSeconds);
  const outputLimitBytes = Math.min(plan.output_limit_bytes, policy.maxOutputBytes);
  const common = { cwd, env, timeoutMs: timeoutSeconds * 1000, outputLimitBytes };

  if (plan.command === SYSTEM_EXEC) {
    const file = shell.executables.get(input.executable!);
    if (file === undefined) return deny(`the executable is not an alias the node offers (${oneOf(shell.executables.keys())})`);
    return { ok: true, spec: { file, args: input.args ?? [], ...common } };
  }
  return { ok: true, spec: { file: shell.program, args: ['-c', input.script!], ...common } };
}

const WORKSPACE_INPUTS = {
  [WORKSPACE_READ]: WorkspaceReadInput,
  [WORKSPACE_SEARCH]: WorkspaceSearchInput,
  [WORKSPACE_PATCH]: WorkspacePatchInput,
} as const;

/** A workspace command's input checked, and its profile found: the model names only an alias the command offers. */
function authorizeWorkspace(plan: NodeExecutionPlan, config: CompanionConfig): PolicyVerdict {
  const validate = WORKSPACE_INPUTS[plan.command as keyof typeof WORKSPACE_INPUTS] ?? WorkspaceWriteInput;
  if (!validate(plan.input)) {
    const first = validate.errors?.[0];
    return invalid(`the input does not fit ${plan.command}: ${first?.instancePath || '(input)'} ${first?.message ?? 'is invalid'}`.slice(0, 512));
  }
  const input = plan.input as Record<string, unknown>;
  const profiles = profilesFor(plan.command, config);
  const profile = profiles.find((p) => p.alias === input.profile);
  if (!profile) return deny(`the profile is not one ${plan.command} works in (${oneOf(profiles.map((p) => p.alias))})`);
  // An objective's grant on part of the profile: every path's real path must be inside one of those parts.
  const confined = plan.workspace_within ? { ...profile, within: plan.workspace_within } : profile;
  return {
    ok: true,
    workspace: { command: plan.command, profile: confined, input, outputLimitBytes: Math.min(plan.output_limit_bytes, config.policy.maxOutputBytes) },
  };
}
