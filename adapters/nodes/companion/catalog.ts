// The catalog a node advertises, derived from its config alone: one descriptor
// per command the operator allows, its input schema as the model sees it. The
// schema names only scope names, executable aliases and environment names —
// the directories, paths and values behind them never leave the node.
import type { NodeCatalog, NodeCommandDescriptor, NodeRisk } from '../../../generated/schemas.js';
import { catalogHash } from '../../../core/surfaces/nodes/wire/catalog.js';
import { MAX_ENV_BYTES, MAX_SCRIPT_BYTES } from '../../../core/surfaces/nodes/wire/limits.js';
import { CompanionConfigError, type CompanionConfig, type CompanionFileProfile } from './config.js';
import {
  workspaceDescriptor,
  WORKSPACE_COMMANDS,
  WORKSPACE_PATCH,
  WORKSPACE_READ,
  WORKSPACE_SEARCH,
  WORKSPACE_WRITE,
  WRITING_COMMANDS,
} from './workspace-catalog.js';

export const SHELL_EXEC = 'shell.exec.v1';
export const SYSTEM_EXEC = 'system.exec.v1';
export { WORKSPACE_COMMANDS, WORKSPACE_PATCH, WORKSPACE_READ, WORKSPACE_SEARCH, WORKSPACE_WRITE, WRITING_COMMANDS } from './workspace-catalog.js';

/** The commands this companion can run, with their risk. */
export const COMMAND_RISK: Readonly<Record<string, NodeRisk>> = {
  [SHELL_EXEC]: 'privileged',
  [SYSTEM_EXEC]: 'privileged',
  [WORKSPACE_READ]: 'read',
  [WORKSPACE_SEARCH]: 'read',
  [WORKSPACE_WRITE]: 'write',
  [WORKSPACE_PATCH]: 'write',
};

const RISK_ORDER: readonly NodeRisk[] = ['read', 'write', 'privileged'];
export const riskWithin = (risk: NodeRisk, maximum: NodeRisk): boolean => RISK_ORDER.indexOf(risk) <= RISK_ORDER.indexOf(maximum);

export interface DerivedCatalog {
  catalog: NodeCatalog;
  hash: string;
  /** Allowed commands left out, and why. */
  warnings: string[];
}

export function deriveCatalog(config: CompanionConfig): DerivedCatalog {
  const unknown = config.policy.allowedCommands.filter((name) => !Object.hasOwn(COMMAND_RISK, name));
  if (unknown.length > 0) {
    const known = Object.keys(COMMAND_RISK).join(', ');
    throw new CompanionConfigError(
      'policy.allowed_commands names commands this companion does not offer',
      unknown.map((n) => `${n} (it offers ${known})`),
    );
  }
  const warnings: string[] = [];
  const commands: NodeCommandDescriptor[] = [];
  for (const name of [...config.policy.allowedCommands].sort()) {
    const risk = COMMAND_RISK[name];
    if (!riskWithin(risk, config.policy.maximumRisk)) {
      warnings.push(`${name} is left out: its risk ${risk} is over policy.maximum_risk ${config.policy.maximumRisk}`);
      continue;
    }
    if (name === SYSTEM_EXEC && config.shell.executables.size === 0) {
      warnings.push(`${name} is left out: shell.executables names no executable`);
      continue;
    }
    if (WORKSPACE_COMMANDS.includes(name)) {
      const profiles = profilesFor(name, config);
      if (profiles.length === 0) {
        warnings.push(`${name} is left out: files names no profile with a ${WRITING_COMMANDS.includes(name) ? 'writable' : 'readable'} root`);
        continue;
      }
      commands.push(workspaceDescriptor(name, risk, profiles, config));
      continue;
    }
    commands.push(descriptor(name, risk, config));
  }
  const catalog: NodeCatalog = { commands };
  return { catalog, hash: catalogHash(catalog), warnings };
}

function descriptor(name: string, risk: NodeRisk, config: CompanionConfig): NodeCommandDescriptor {
  const { policy } = config;
  const common = commonProperties(config);
  const input_schema =
    name === SHELL_EXEC
      ? objectSchema(['script'], {
          script: {
            type: 'string',
            minLength: 1,
            maxLength: MAX_SCRIPT_BYTES,
            description: `The script, run by ${shellName(config.shell.program)} (at most ${MAX_SCRIPT_BYTES} bytes in UTF-8).`,
          },
          ...common,
        })
      : objectSchema(['executable'], {
          executable: { type: 'string', enum: [...config.shell.executables.keys()].sort(), description: 'The executable to run, by its alias.' },
          args: { type: 'array', items: { type: 'string' }, maxItems: 1024, description: 'Its arguments, passed as they are (no shell).' },
          ...common,
        });
  const description =
    name === SHELL_EXEC
      ? 'Runs a script with the shell of the node, in one of its working scopes; answers its exit code, stdout and stderr.'
      : 'Runs one of the executables of the node by alias with arguments (no shell), in one of its working scopes; answers its exit code, stdout and stderr.';
  return { name, risk, description, input_schema, max_timeout_seconds: policy.maxTimeoutSeconds, max_output_bytes: policy.maxOutputBytes };
}

function commonProperties(config: CompanionConfig): Record<string, unknown> {
  const scopes = [...config.shell.workingScopes.keys()];
  const names = [...config.shell.environmentNames].sort();
  return {
    ...(scopes.length === 0
      ? {}
      : {
          working_scope: { type: 'string', enum: [...scopes].sort(), description: `The named working directory to run in (default ${scopes[0]}).` },
        }),
    ...(names.length === 0
      ? {}
      : {
          env: {
            type: 'object',
            additionalProperties: false,
            properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
            description: `Environment variables to set, of these names only (at most ${MAX_ENV_BYTES} bytes in all).`,
          },
        }),
    timeout_seconds: { type: 'integer', minimum: 1, maximum: config.policy.maxTimeoutSeconds, description: 'Stops the command after this many seconds.' },
  };
}

const objectSchema = (required: string[], properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, required, properties });

/** The shell's name without its directory (`/bin/bash` → `bash`), so the model knows the dialect. */
const shellName = (program: string): string => program.split('/').pop() || 'sh';

/** The profiles a workspace command works in: every one for reading, those with a writable root for writing. */
export function profilesFor(command: string, config: CompanionConfig): CompanionFileProfile[] {
  return WRITING_COMMANDS.includes(command) ? config.files.filter((p) => p.writableRoots.length > 0) : config.files;
}
