// `palai node run`: the companion process. It keeps its identity, state and
// ledger in its home, derives its catalog from the operator's config, holds
// one connection to the hub (reconnecting after any disconnect) and runs what
// the hub sends within its local policy. SIGTERM stops taking invocations,
// lets the running ones finish within the grace, then ends with 0; a permanent
// refusal from the hub ends with 1 and says why.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_CLOSE } from '../../../core/surfaces/nodes/wire/close-codes.js';
import { deriveCatalog, type DerivedCatalog } from './catalog.js';
import { CompanionConfigError, loadCompanionConfig, type CompanionConfig } from './config.js';
import { HubConnection, type Admission } from './connection.js';
import { ledgerDir, loadOrCreateIdentity, lockHome, readState, writeState, type CompanionState } from './home.js';
import { Invocations } from './invocations.js';
import { Ledger } from './ledger.js';

export interface CompanionOptions {
  hub: string;
  configPath: string;
  home: string;
  /** Presented only while the node is not paired; never written anywhere. */
  token?: string;
  clientVersion: string;
  /** One line for the operator (stderr). */
  log(line: string): void;
  /** Resolves with a signal's name when the companion must stop (SIGTERM, SIGINT); a second one stops the running commands. */
  stopSignal: () => Promise<string>;
  /** Calls back on each request to reload the config (SIGHUP). */
  onReload?: (reload: () => void) => void;
}

/** Whether a process group still has a member (pids are reused, so this is a hint for the operator, never a reason to signal it). */
function alive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

/** Why each permanent refusal happened, for the operator. */
const REFUSALS: Record<number, string> = {
  [NODE_CLOSE.revoked]: 'the hub revoked or denied this node; ask its operator, or start over with a new home and enrollment token',
  [NODE_CLOSE.enrollmentRefused]:
    'the hub does not know this node and refused its enrollment token (missing, unknown, expired, revoked or used up); start again with --token and a fresh token',
  [NODE_CLOSE.invalidProof]: "the hub refused this node's identity proof",
  [NODE_CLOSE.invalidFrame]: 'the hub refused a frame of this companion (a protocol mismatch)',
  [NODE_CLOSE.incompatibleProtocol]: 'the hub speaks no protocol version this companion speaks; upgrade one of them',
  [NODE_CLOSE.catalogTooLarge]: "the hub refused this node's catalog as over its limits; allow fewer commands, scopes or names",
  [NODE_CLOSE.tooLarge]: 'the hub refused a frame over 1 MiB',
};

export async function runCompanion(options: CompanionOptions): Promise<number> {
  const { log } = options;
  if (!/^wss?:\/\//iu.test(options.hub)) throw new CompanionConfigError(`--hub must be a ws:// or wss:// URL (got ${options.hub.slice(0, 100)})`);
  const { config, warnings } = loadCompanionConfig(options.configPath);
  const derived = deriveCatalog(config);
  for (const line of [...warnings, ...derived.warnings]) log(`warning: ${line}`);

  // One companion per home: two would share an identity and a ledger, and one could run what the other ran.
  const release = lockHome(options.home);
  try {
    return await runHeld(options, config, derived);
  } finally {
    release();
  }
}

/** The companion's run, its home held. */
async function runHeld(options: CompanionOptions, config: CompanionConfig, derived: DerivedCatalog): Promise<number> {
  const { log } = options;
  let { catalog, hash } = derived;
  const identity = loadOrCreateIdentity(options.home);
  let state: CompanionState = readState(options.home);
  // Paired with one hub says nothing about another: a new hub sees the token again.
  if (state.hub !== options.hub) state = { hub: options.hub, paired: false, last_admission: null };
  writeState(options.home, state);
  const ledger = Ledger.open(ledgerDir(options.home), Date.now(), { retentionMs: config.ledgerRetentionMs });
  const unknown = ledger.all().filter((r) => r.state === 'unknown');
  if (unknown.length > 0) {
    const groups = unknown.flatMap((r) => (r.pid ? [r.pid] : [])).filter(alive);
    log(`the ledger holds ${unknown.length} invocation(s) whose outcome is unknown (a previous run stopped mid-command); they are not run again`);
    if (groups.length > 0) log(`process group(s) ${groups.join(', ')} of those may still be running; they are left to you`);
  }
  const defaultDirectory = join(options.home, 'scratch');
  mkdirSync(defaultDirectory, { recursive: true, mode: 0o700 });

  let approved: readonly string[] = state.last_admission?.allowed_commands ?? [];
  const invocations = new Invocations({
    nodeId: identity.nodeId,
    config,
    catalog,
    catalogHash: hash,
    ledger,
    defaultDirectory,
    approvedCommands: () => approved,
    log,
  });
  const onAdmission = (admission: Admission) => {
    approved = admission.allowedCommands;
    const paired = admission.state !== 'pending_pairing' && admission.state !== 'revoked';
    if (paired && !state.paired) log(`paired: approved commands ${admission.allowedCommands.join(', ') || '(none)'}`);
    if (admission.state === 'pending_pairing') {
      log(
        `${identity.nodeId} is pending approval; approve it on the hub with: palai nodes approve ${identity.nodeId}${catalog.commands.map((c) => ` --command ${c.name}`).join('')} --alias <name>`,
      );
    } else log(`admitted as ${admission.state}`);
    state = {
      hub: options.hub,
      paired: state.paired || paired,
      last_admission: {
        at: new Date().toISOString(),
        state: admission.state,
        allowed_commands: admission.allowedCommands,
        approved_catalog_hash: admission.approvedCatalogHash,
      },
    };
    writeState(options.home, state);
  };
  const connection = new HubConnection({
    url: options.hub,
    identity,
    catalog,
    catalogHash: hash,
    clientVersion: options.clientVersion,
    ...(config.displayName ? { displayName: config.displayName } : {}),
    token: () => (state.paired ? undefined : options.token),
    onAdmission,
    onLink: (send) => invocations.connect(send),
    onInvoke: (plan, secrets) =>
      void invocations.invoke(plan, secrets).catch((error: unknown) => log(`invocation ${plan.invocation_id} failed: ${String(error)}`)),
    onCancel: (id) => void invocations.cancel(id).catch((error: unknown) => log(`cancel of ${id} failed: ${String(error)}`)),
    log,
  });
  log(`node ${identity.nodeId}: ${catalog.commands.length} command(s) (catalog ${hash}); connecting to ${options.hub}`);
  options.onReload?.(() => {
    try {
      const reloaded = loadCompanionConfig(options.configPath);
      const next = deriveCatalog(reloaded.config);
      for (const line of [...reloaded.warnings, ...next.warnings]) log(`warning: ${line}`);
      if (next.hash === hash) {
        log('config reloaded; the catalog is unchanged');
        invocations.reconfigure(reloaded.config, next.catalog, next.hash);
        return;
      }
      ({ catalog, hash } = next);
      invocations.reconfigure(reloaded.config, catalog, hash);
      connection.changeCatalog(catalog, hash);
      log(`config reloaded: ${catalog.commands.length} command(s) (catalog ${hash}); the hub sees the new catalog`);
    } catch (error) {
      const details = error instanceof CompanionConfigError ? [error.message, ...error.details].join('; ') : String(error);
      log(`the config was not reloaded (the running one stays): ${details}`);
    }
  });

  const graceMs = config.policy.graceSeconds * 1000;
  const stopping = options.stopSignal().then(async (signal) => {
    invocations.stopTaking();
    if (invocations.runningCount > 0) {
      log(`received ${signal}; letting ${invocations.runningCount} running command(s) finish for up to ${config.policy.graceSeconds} s`);
    } else log(`received ${signal}; stopping`);
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((resolve) => (timer = setTimeout(() => resolve('grace'), graceMs)));
    const ended = await Promise.race([invocations.whenIdle().then(() => 'idle' as const), graceOver, options.stopSignal().then(() => 'again' as const)]);
    clearTimeout(timer);
    if (ended !== 'idle') {
      log(ended === 'grace' ? 'the grace is over; stopping the commands still running' : 'stopping the running commands now');
      await invocations.stopAll();
    }
    connection.stop();
  });
  const end = await connection.run();
  if (end.kind === 'stopped') {
    await stopping;
    log('stopped');
    return 0;
  }
  log(`the hub refused this node for good (${end.code}${end.reason ? `: ${end.reason}` : ''}): ${REFUSALS[end.code] ?? 'see docs/node-companion.md'}`);
  invocations.stopTaking();
  await invocations.stopAll();
  return 1;
}
