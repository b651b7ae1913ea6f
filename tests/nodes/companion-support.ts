// What the companion tests share: a config over temporary directories, plans
// hashed as the hub hashes them, and an Invocations whose frames are collected.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeCompanionFrame, NodeExecutionPlan, NodeInvokeResultFrame } from '../../generated/protocol-schemas.js';
import { deriveCatalog, type DerivedCatalog } from '../../adapters/nodes/companion/catalog.js';
import { parseCompanionConfig, type CompanionConfig } from '../../adapters/nodes/companion/config.js';
import { ledgerDir, loadOrCreateIdentity, type NodeIdentity } from '../../adapters/nodes/companion/home.js';
import { Invocations } from '../../adapters/nodes/companion/invocations.js';
import { Ledger } from '../../adapters/nodes/companion/ledger.js';
import { descriptorHash } from '../../core/surfaces/nodes/wire/catalog.js';
import { hashedPlan } from '../../core/surfaces/nodes/wire/execution-plan.js';

const dirs: string[] = [];
export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
export function tempDir(prefix = 'palai-companion-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
export const invocationId = (): string => `ninv_${[...randomBytes(26)].map((b) => CROCKFORD[b % 32]).join('')}`;

export interface Node {
  home: string;
  configPath: string;
  scopes: { repo: string; scratch: string };
  config: CompanionConfig;
  derived: DerivedCatalog;
  identity: NodeIdentity;
}

/** A node home with the kind of config: two scopes, `echo` as an executable, CI as the one environment name. */
export function makeNode(overrides: { allowed?: string; grace?: number } = {}): Node {
  const root = tempDir();
  const home = join(root, 'home');
  const scopes = { repo: join(root, 'repo'), scratch: join(root, 'scratch') };
  mkdirSync(scopes.repo);
  mkdirSync(scopes.scratch);
  const yaml = `policy: { allowed_commands: ${overrides.allowed ?? '[shell.exec.v1, system.exec.v1]'}, maximum_risk: privileged, max_timeout_seconds: 600, max_output_bytes: 262144, grace_seconds: ${overrides.grace ?? 1} }
shell:
  program: /bin/bash
  working_scopes: { repo: ${scopes.repo}, scratch: ${scopes.scratch} }
  executables: { echo: /bin/echo }
  environment_names: [CI]
`;
  const configPath = join(root, 'palai-node.yaml');
  writeFileSync(configPath, yaml);
  const { config } = parseCompanionConfig(yaml);
  return { home, configPath, scopes, config, derived: deriveCatalog(config), identity: loadOrCreateIdentity(home) };
}

export function planFor(node: Node, command: string, input: Record<string, unknown>, extra: Partial<NodeExecutionPlan> = {}): NodeExecutionPlan {
  const now = Date.now();
  const descriptor = node.derived.catalog.commands.find((d) => d.name === command);
  const { plan_hash: _, ...fields } = {
    invocation_id: invocationId(),
    node_id: node.identity.nodeId,
    command,
    descriptor_hash: descriptor ? descriptorHash(descriptor) : `sha256:${'0'.repeat(64)}`,
    catalog_hash: node.derived.hash,
    input,
    timeout_seconds: 600,
    output_limit_bytes: 262144,
    idempotency_key: `resp_${randomBytes(6).toString('hex')}:call_${randomBytes(6).toString('hex')}`,
    prepared_at: new Date(now).toISOString(),
    expires_at: new Date(now + 300_000).toISOString(),
    plan_hash: '',
    ...extra,
  };
  return hashedPlan(fields);
}

export interface Harness {
  invocations: Invocations;
  ledger: Ledger;
  frames: NodeCompanionFrame[];
  /** The result frames, in order. */
  results(): NodeInvokeResultFrame[];
}

export function harness(node: Node, options: { approved?: string[]; now?: () => number } = {}): Harness {
  const ledger = Ledger.open(ledgerDir(node.home));
  const frames: NodeCompanionFrame[] = [];
  const invocations = new Invocations({
    nodeId: node.identity.nodeId,
    config: node.config,
    catalog: node.derived.catalog,
    catalogHash: node.derived.hash,
    ledger,
    defaultDirectory: node.home,
    approvedCommands: () => options.approved ?? ['shell.exec.v1', 'system.exec.v1'],
    ...(options.now ? { now: options.now } : {}),
  });
  invocations.connect((frame) => frames.push(frame));
  return { invocations, ledger, frames, results: () => frames.filter((f): f is NodeInvokeResultFrame => f.type === 'invoke.result') };
}

/** True once no process has this pid. */
export function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
