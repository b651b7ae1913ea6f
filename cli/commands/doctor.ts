// `palai doctor`: checks what a working installation needs and, for each thing
// that is wrong, says how to fix it. Exits 1 when any check fails. The store
// drivers and the model resolver are loaded by the checks that use them, so the
// help, which loads every command, does not pay for them.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { listApiKeys } from '../../core/auth/api-keys.js';
import { listProjects } from '../../core/auth/projects.js';
import type { PalaiConfig } from '../../core/config.js';
import type { ConnectionRow } from '../../core/models/connections.js';
import { shownUrl } from '../../core/models/key-binding.js';
import type { ModelAccess } from '../../core/models/resolve.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { Db } from '../../core/store/db.js';
import { migrationStatus } from '../../core/store/migrate.js';
import type { CommandContext, CommandStore } from './context.js';
import { messageOf } from './errors.js';
import { modelAccess, storeLabel } from './store.js';

/** The oldest Node.js Palai supports (package.json "engines"). */
const MIN_NODE: [number, number] = [22, 12];
/** A database that has not answered by then is reported unreachable rather than waited for. */
const DATABASE_TIMEOUT_MS = 5_000;

class Checklist {
  failed = false;
  constructor(readonly context: CommandContext) {}
  pass(text: string): void {
    this.context.out(`✓ ${text}`);
  }
  info(text: string): void {
    this.context.out(`ℹ ${text}`);
  }
  fail(text: string, fix: string): void {
    this.failed = true;
    this.context.out(`✗ ${text}\n    fix: ${fix}`);
  }
}

export function registerDoctor(program: Command, context: CommandContext): void {
  program
    .command('doctor')
    .description('check the installation (Node.js, configuration, store, migrations, keys) and say how to fix problems')
    .action(async () => {
      const checks = new Checklist(context);
      checkNode(checks);
      await checkInstallation(checks);
      if (checks.failed) context.exitCode = 1;
    });
}

function checkNode(checks: Checklist): void {
  const [major, minor] = process.versions.node.split('.').map(Number);
  const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  const wanted = `>= ${MIN_NODE.join('.')}`;
  if (ok) checks.pass(`Node.js ${process.versions.node} (${wanted})`);
  else checks.fail(`Node.js ${process.versions.node} is too old (${wanted} needed)`, `install Node.js ${MIN_NODE.join('.')} or newer`);
}

async function checkInstallation(checks: Checklist): Promise<void> {
  let config: PalaiConfig;
  try {
    config = checks.context.config();
    checks.pass('configuration loads');
  } catch (error) {
    checks.fail(`configuration does not load: ${messageOf(error)}`, 'correct that environment variable (docs/configuration.md lists them all)');
    return;
  }
  checks.pass(`store: ${storeLabel(config)}${config.databaseUrl ? '' : ' (one process at a time; not for production)'}`);
  if (!config.databaseUrl) {
    if (!checkHomeWritable(checks, config.home)) return;
    if (!existsSync(join(config.home, 'db'))) {
      checks.fail(`there is no embedded store under ${config.home} yet`, 'run palai migrate, or start palai serve once, to create it');
      return;
    }
  }
  await checkDatabase(checks, config);
}

/** Writes a probe file, since permission bits alone miss read-only mounts and root. */
function checkHomeWritable(checks: Checklist, home: string): boolean {
  let dir = home;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  const probe = join(dir, `.palai-doctor-${process.pid}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
  } catch (error) {
    checks.fail(`PALAI_HOME ${home} is not writable: ${messageOf(error)}`, 'point PALAI_HOME at a writable directory, or fix its permissions');
    return false;
  }
  checks.pass(dir === home ? `PALAI_HOME ${home} is writable` : `PALAI_HOME ${home} can be created (in ${dir})`);
  return true;
}

async function checkDatabase(checks: Checklist, config: PalaiConfig): Promise<void> {
  const reachFix = config.databaseUrl
    ? 'start PostgreSQL, or correct PALAI_DATABASE_URL (host, port, user, password, database)'
    : `check that ${join(config.home, 'db')} is an intact Palai store`;
  let store: CommandStore;
  try {
    store = await checks.context.openStore();
  } catch (error) {
    if (error instanceof PalaiError && error.slug === 'store-busy') {
      // Another process holds the embedded store (a `palai serve` would have run this doctor itself); that is normal, not a fault.
      checks.info(
        'the embedded store is in use by another process (palai bot slack, palai mcp, or a palai serve without its operator socket), so the store checks were skipped',
      );
      return;
    }
    checks.fail(`cannot open the store (${storeLabel(config)}): ${messageOf(error)}`, reachFix);
    return;
  }
  const { db } = store;
  try {
    try {
      await withTimeout(db.query('SELECT 1'));
      checks.pass('database reachable');
    } catch (error) {
      checks.fail(`database not reachable: ${messageOf(error)}`, reachFix);
      return;
    }
    const status = await withTimeout(migrationStatus(db));
    if (status.pending.length > 0) {
      const names = status.pending.map((m) => `${String(m.version).padStart(4, '0')}_${m.name}`).join(', ');
      checks.fail(`${status.pending.length} migration(s) not applied: ${names}`, 'run palai migrate (palai serve also applies them when it starts)');
      return;
    }
    checks.pass(`migrations applied (${status.applied})`);
    const projects = await listProjects(db);
    const activeKeys = (await listApiKeys(db)).filter((key) => !key.revoked_at);
    if (projects.length === 0) checks.fail('no project yet', 'run palai keys create, or start palai serve once (it creates a project and a key)');
    else if (activeKeys.length === 0) checks.fail(`${projects.length} project(s) but no active API key`, 'run palai keys create');
    else checks.pass(`${projects.length} project(s), ${activeKeys.length} active API key(s)`);
    const access = modelAccess(config);
    await checkConnections(checks, db, config, access);
    await checkAgents(checks, db, access);
  } catch (error) {
    checks.fail(`reading the store failed: ${messageOf(error)}`, reachFix);
  } finally {
    // Closing releases the embedded store's lock (the running hub's own store stays open); a hung connection must not keep doctor waiting.
    await withTimeout(store.close()).catch(() => undefined);
  }
}

async function checkConnections(checks: Checklist, db: Db, config: PalaiConfig, { secrets }: ModelAccess): Promise<void> {
  const { rows } = await db.query<ConnectionRow>('SELECT * FROM model_connections ORDER BY project_id, name');
  const { connectionReadiness } = await import('../../core/models/resolve.js');
  for (const connection of rows) {
    const { usable, detail } = await connectionReadiness(db, secrets, connection, config);
    const label = `model connection ${connection.name} (${connection.provider}, project ${connection.project_id})`;
    if (usable) checks.pass(`${label}: ${detail}`);
    else
      checks.fail(
        `${label}: ${detail}`,
        'set the variable on every palai process, or recreate the connection with a key (or with the base URL its variable is bound to)',
      );
  }
  if (rows.length === 0) checks.info('no model connections; agents use the fake model or keys from OPENAI_API_KEY / ANTHROPIC_API_KEY');
  // Where each server key may go: a key is sent to its bound base URL and nowhere else.
  const bindings = new Map([
    ['OPENAI_API_KEY', config.openaiBaseUrl],
    ['ANTHROPIC_API_KEY', config.anthropicBaseUrl],
    ...config.keyEnvAllowlist.map(({ variable, baseUrl }) => [variable, baseUrl] as const),
  ]);
  for (const [variable, baseUrl] of bindings) checks.info(`${variable} is sent only to ${shownUrl(baseUrl)}`);
}

/** Each agent whose runs would fail here before calling the model (its key is not set, say), in the words the run would fail with. */
async function checkAgents(checks: Checklist, db: Db, access: ModelAccess): Promise<void> {
  const [{ listEveryAgent }, { modelProblem }] = await Promise.all([import('../../core/agents/agents.js'), import('../../core/models/resolve.js')]);
  const agents = await listEveryAgent(db);
  if (agents.length === 0) return;
  let ready = 0;
  for (const agent of agents) {
    const problem = await modelProblem(db, access, agent.project_id, agent.spec.model!);
    if (problem === null) ready += 1;
    else
      checks.fail(
        `agent ${agent.name} (project ${agent.project_id}): ${problem}`,
        "set that key on every palai process, or change the agent's model (a connection with a key of its own)",
      );
  }
  if (ready > 0) checks.pass(`${ready} agent(s) have what their model needs`);
}

async function withTimeout<T>(work: Promise<T>): Promise<T> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      work,
      sleep(DATABASE_TIMEOUT_MS, undefined, { signal: timer.signal }).then(() => {
        throw new Error(`no answer within ${DATABASE_TIMEOUT_MS / 1000} s`);
      }),
    ]);
  } finally {
    timer.abort();
  }
}
