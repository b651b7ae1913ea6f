// palai-node.yaml, the node operator's authority: which commands the companion
// offers and runs, whatever the hub approved. Its shape is NodeCompanionConfig
// (protocols/node-protocol.schema.json); a key the schema does not know is
// reported and ignored (a newer config read by an older companion), a known key
// of the wrong type is an error. Defaults are in DEFAULTS.
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { parseDocument } from 'yaml';
import type { NodeCompanionConfig as ConfigDocument } from '../../../generated/protocol-schemas.js';
import { NodeCompanionConfig as validateConfig } from '../../../generated/protocol-validators.js';
import type { NodeRisk } from '../../../generated/schemas.js';
import type { FileProfile } from './workspace/profile.js';

export interface CompanionPolicy {
  /** Empty denies everything. */
  allowedCommands: string[];
  maximumRisk: NodeRisk;
  maxTimeoutSeconds: number;
  maxOutputBytes: number;
  /** SIGTERM's wait for running commands, and a cancel's between TERM and KILL. */
  graceSeconds: number;
}

export interface CompanionShell {
  program: string;
  /** Name → directory, in the file's order (the first is the default scope). */
  workingScopes: Map<string, string>;
  /** Alias → executable path. */
  executables: Map<string, string>;
  environmentNames: string[];
}

/** A file profile with the hub-side approval rules of its operations. */
export interface CompanionFileProfile extends FileProfile {
  approval: { metadata: boolean; read: boolean; write: boolean };
}

export interface CompanionConfig {
  displayName?: string;
  policy: CompanionPolicy;
  shell: CompanionShell;
  /** The workspace commands' profiles, in the file's order. */
  files: CompanionFileProfile[];
  /** How long the ledger keeps ended records (ledger.retention_hours). */
  ledgerRetentionMs: number;
}

export const DEFAULTS = {
  /** Nothing privileged is offered unless the operator says so. */
  maximumRisk: 'read',
  maxTimeoutSeconds: 600,
  maxOutputBytes: 262_144,
  graceSeconds: 10,
  program: '/bin/sh',
  maxFileBytes: 262_144,
  ledgerRetentionHours: 7 * 24,
} as const satisfies Record<string, unknown>;

/** A config the companion cannot run with; `details` holds one line per fault. */
export class CompanionConfigError extends Error {
  constructor(
    message: string,
    readonly details: string[] = [],
  ) {
    super(message);
    this.name = 'CompanionConfigError';
  }
}

export interface LoadedConfig {
  config: CompanionConfig;
  /** Keys ignored, commands left out: for the operator's log. */
  warnings: string[];
}

export function loadCompanionConfig(path: string): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CompanionConfigError(`cannot read the config ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  return parseCompanionConfig(text, path);
}

export function parseCompanionConfig(text: string, name = 'palai-node.yaml'): LoadedConfig {
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new CompanionConfigError(
      `${name} is not valid YAML`,
      document.errors.map((e) => e.message.split('\n')[0]),
    );
  }
  const value: unknown = document.toJS();
  return checkCompanionConfig(value, name);
}

/** Validates a parsed document against the schema, then the rules a schema cannot say (absolute paths). */
export function checkCompanionConfig(value: unknown, name = 'palai-node.yaml'): LoadedConfig {
  const warnings: string[] = [];
  const faults: string[] = [];
  if (!validateConfig(value)) {
    for (const error of validateConfig.errors ?? []) {
      const at = error.instancePath.slice(1).replaceAll('/', '.');
      if (error.keyword === 'additionalProperties') {
        const key = String((error.params as { additionalProperty: string }).additionalProperty);
        warnings.push(`${name}: unknown key ${at ? `${at}.` : ''}${key} ignored`);
      } else {
        faults.push(`${at || '(document)'}: ${error.message ?? 'is invalid'}`);
      }
    }
  }
  if (faults.length > 0) throw new CompanionConfigError(`${name} is not a valid companion config`, faults);
  const document = value as ConfigDocument;
  const shell = document.shell ?? {};
  const paths = (entries: Record<string, string> | undefined, key: string) => {
    const map = new Map(Object.entries(entries ?? {}));
    for (const [alias, path] of map) if (!isAbsolute(path)) faults.push(`shell.${key}.${alias}: must be an absolute path`);
    return map;
  };
  const config: CompanionConfig = {
    ...(document.display_name === undefined ? {} : { displayName: document.display_name }),
    policy: {
      allowedCommands: [...new Set(document.policy.allowed_commands)],
      maximumRisk: document.policy.maximum_risk ?? DEFAULTS.maximumRisk,
      maxTimeoutSeconds: document.policy.max_timeout_seconds ?? DEFAULTS.maxTimeoutSeconds,
      maxOutputBytes: document.policy.max_output_bytes ?? DEFAULTS.maxOutputBytes,
      graceSeconds: document.policy.grace_seconds ?? DEFAULTS.graceSeconds,
    },
    shell: {
      program: shell.program ?? DEFAULTS.program,
      workingScopes: paths(shell.working_scopes, 'working_scopes'),
      executables: paths(shell.executables, 'executables'),
      environmentNames: [...new Set(shell.environment_names ?? [])],
    },
    files: [],
    ledgerRetentionMs: (document.ledger?.retention_hours ?? DEFAULTS.ledgerRetentionHours) * 3600_000,
  };
  if (!isAbsolute(config.shell.program)) faults.push('shell.program: must be an absolute path');
  config.files = fileProfiles(document.files ?? [], faults);
  if (faults.length > 0) throw new CompanionConfigError(`${name} is not a valid companion config`, faults);
  return { config, warnings };
}

/** The profiles as the workspace commands use them: aliases unique, roots absolute. */
function fileProfiles(entries: NonNullable<ConfigDocument['files']>, faults: string[]): CompanionFileProfile[] {
  const seen = new Set<string>();
  return entries.map((entry, index) => {
    if (seen.has(entry.alias)) faults.push(`files.${index}.alias: ${entry.alias} is the alias of another profile`);
    seen.add(entry.alias);
    const roots = (list: string[] | undefined, key: string) => {
      for (const root of list ?? []) if (!isAbsolute(root)) faults.push(`files.${index}.${key}: every root must be an absolute path`);
      return [...new Set(list ?? [])];
    };
    const writableRoots = roots(entry.writable_roots, 'writable_roots');
    const readableRoots = roots(entry.readable_roots, 'readable_roots');
    if (readableRoots.length + writableRoots.length === 0) faults.push(`files.${index}: names no readable or writable root`);
    return {
      alias: entry.alias,
      revision: entry.revision ?? null,
      readableRoots,
      writableRoots,
      allowCreate: entry.allow_create ?? false,
      allowOverwrite: entry.allow_overwrite ?? false,
      maxFileBytes: entry.max_file_bytes ?? DEFAULTS.maxFileBytes,
      approval: { metadata: entry.approval?.metadata ?? false, read: entry.approval?.read ?? false, write: entry.approval?.write ?? false },
    };
  });
}
