// Opening the store for a one-shot command, with the failures a user can act on
// (unreachable database, embedded store held by `palai serve`) said plainly.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PalaiConfig } from '../../core/config.js';
import { redactUrl } from '../../core/logger.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { ModelAccess } from '../../core/models/resolve.js';
import { secretBoxFrom } from '../../core/secrets/secret-box.js';
import { createSecretStore } from '../../core/secrets/secret-store.js';
import type { Db } from '../../core/store/db.js';
import { migrate } from '../../core/store/migrate.js';
import type { CommandContext, CommandStore } from './context.js';
import { CliError, messageOf } from './errors.js';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH']);

/** True for errors that mean "cannot get a working connection", not "a query failed". */
function isConnectionFailure(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isConnectionFailure);
  const code = (error as { code?: unknown } | null)?.code;
  // node-postgres reports its own connect timeout without a code.
  if (error instanceof Error && /connection timeout/i.test(error.message)) return true;
  if (typeof code !== 'string') return false;
  // SQLSTATE classes 08 (connection exception) and 28 (authorization), 3D000: no such database.
  return NETWORK_CODES.has(code) || code.startsWith('08') || code.startsWith('28') || code === '3D000';
}

/** Where the store lives, safe to print: the URL's password is redacted. */
export function storeLabel(config: Pick<PalaiConfig, 'databaseUrl' | 'home'>): string {
  return config.databaseUrl ? `PostgreSQL at ${redactUrl(config.databaseUrl)}` : `embedded store at ${join(config.home, 'db')}`;
}

/** Says so on stderr when opening the store will create the embedded one, which takes a moment (more without the template). */
export async function announceNewStore(config: Pick<PalaiConfig, 'databaseUrl' | 'home'>): Promise<void> {
  if (config.databaseUrl || existsSync(join(config.home, 'db', 'PG_VERSION'))) return;
  const { templateReady } = await import('../../core/store/pglite-template.js');
  const initdb = templateReady() ? '' : ' (preparing its template first: initdb in WebAssembly, once; a few seconds)';
  console.error(`Creating the embedded store at ${join(config.home, 'db')}${initdb} …`);
}

/** Rephrases a connection failure with the (redacted) database it was for; passes anything else through. */
export function explainStoreError(error: unknown, config: Pick<PalaiConfig, 'databaseUrl' | 'home'>): unknown {
  if (config.databaseUrl && isConnectionFailure(error)) {
    return new CliError(`Cannot reach the database (${storeLabel(config)}): ${messageOf(error)}`);
  }
  return error;
}

/**
 * Runs `work` on the context's store and closes it afterwards if it was opened
 * for the command. Like `palai serve`, commands bring a store they opened up to
 * date first unless told not to (`palai migrate` reports what it applied itself).
 */
export async function withStore<T>(context: CommandContext, work: (db: Db) => Promise<T>, options: { migrate?: boolean } = {}): Promise<T> {
  const config = context.config();
  let store: CommandStore;
  try {
    store = await context.openStore();
  } catch (error) {
    throw explainStoreError(error, config);
  }
  try {
    if (store.opened && (options.migrate ?? true)) {
      const applied = await migrate(store.db).catch((error) => {
        throw explainStoreError(error, config);
      });
      if (applied.length > 0) context.err(`Applied migration(s) ${applied.join(', ')} (${storeLabel(config)}).`);
    }
    return await work(store.db);
  } finally {
    await store.close().catch(() => undefined);
  }
}

/**
 * For a command that cannot run beside a hub (it is one, or changes the schema
 * under one): a `store-busy` error while `palai serve` answers on the operator
 * socket becomes one line naming that hub and `consequence`. Anything else is
 * explained as explainStoreError does.
 */
export async function explainHubRunning(error: unknown, config: PalaiConfig, consequence: string): Promise<unknown> {
  if (config.databaseUrl || !(error instanceof PalaiError) || error.slug !== 'store-busy') return explainStoreError(error, config);
  const { runningHub } = await import('../operator-socket/client.js');
  const hub = await runningHub(config.home);
  return hub ? new CliError(`palai serve (process ${hub.pid}) is running on the ${storeLabel(config)}; ${consequence}`) : error;
}

/** The keys a server started here would see (its environment, its PALAI_SECRET_KEY): a command is a composition root of its own. */
export function modelAccess(config: PalaiConfig): ModelAccess {
  return { secrets: createSecretStore({ box: secretBoxFrom(config.secretKey), env: process.env, policy: config }), policy: config };
}
