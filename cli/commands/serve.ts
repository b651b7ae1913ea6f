// `palai serve`: runs the hub (HTTP API and/or worker) until SIGINT or SIGTERM,
// then shuts down gracefully so leases are handed back and the store is closed.
// On the embedded store it also runs other palai processes' store commands,
// which cannot open the store it holds, through its operator socket.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Express } from 'express';
import type { Hub, Role } from '../hub.js';
import { shutDown, type Listeners } from '../shutdown.js';
import { bootstrapIfEmpty } from '../../core/auth/projects.js';
import { loadConfig, type PalaiConfig } from '../../core/config.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { OperatorSocket } from '../operator-socket/server.js';
import { CliError, messageOf } from './errors.js';
import { announceNewStore, explainHubRunning, storeLabel } from './store.js';

export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) throw new InvalidArgumentError('must be an integer from 0 to 65535.');
  return port;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the hub: the HTTP API and the worker, on one store')
    .option('-p, --port <port>', 'port to listen on; 0 picks a free one (default: $PORT, else 8080)', parsePort)
    .addOption(
      new Option(
        '--role <role>',
        'api: the HTTP API only; worker: runs responses and sends deliveries; consumers: takes jobs from queue consumers (worker and consumers listen only for /metrics, /healthz, /readyz); all: everything',
      )
        .choices(['api', 'worker', 'consumers', 'all'])
        .default('all'),
    )
    .action(serve);
}

async function serve(options: { port?: number; role: Role }): Promise<void> {
  const loaded = loadConfig();
  const config: PalaiConfig = { ...loaded, port: options.port ?? loaded.port };
  if (config.adminPort !== null && config.adminPort !== 0 && config.adminPort === config.port && options.role !== 'worker' && options.role !== 'consumers') {
    throw new CliError(`PALAI_ADMIN_PORT (${config.adminPort}) must differ from the API port; unset it to serve /metrics on the API port.`);
  }
  // Listening from the start: a signal during start-up (say, mid-initdb) shuts down once started instead of killing it.
  const stop = nextSignal();
  let hub: Hub;
  try {
    // Loaded here so the other commands skip the HTTP stack's start-up cost.
    const { startHub } = await import('../hub.js');
    await announceNewStore(config);
    hub = await startHub({ config, role: options.role });
  } catch (error) {
    throw await explainHubRunning(
      error,
      config,
      'a second hub cannot open that store: stop that one first, or set PALAI_DATABASE_URL so that several hubs share one PostgreSQL database.',
    );
  }
  const listeners: Listeners = { api: null, admin: null };
  let operatorSocket: OperatorSocket | null = null;
  try {
    await bootstrap(hub, config);
    console.log(`Store: ${storeLabel(config)}${config.databaseUrl ? '' : ' (one process at a time; use PostgreSQL in production)'}`);
    if (!config.databaseUrl) operatorSocket = await offerOperatorSocket(hub, config, listeners);
    await openListeners(hub, config, options.role, listeners);
  } catch (error) {
    listeners.api?.close();
    listeners.admin?.close();
    await operatorSocket?.close(0);
    await hub.close().catch(() => undefined);
    throw error;
  }
  const signal = await stop;
  console.error(`Received ${signal}; finishing running work for up to ${config.shutdownGraceSeconds}s (send it again to stop at once).`);
  // The socket goes at once, so that a command line arriving from now on opens the store itself once it is free; the
  // commands it runs finish beside the drain, within the same grace, and before the store closes.
  const commandsDone = operatorSocket?.close(config.shutdownGraceSeconds * 1000);
  await shutDown(hub, listeners, config.shutdownGraceSeconds * 1000, (line) => console.error(line), commandsDone);
  console.error('Palai stopped.');
}

/**
 * The API listener (not for a worker) and the operator listener: on its own
 * port when PALAI_ADMIN_PORT is set, and on the API port for a worker, which
 * serves nothing else — so every role can be probed and scraped.
 */
async function openListeners(hub: Hub, config: PalaiConfig, role: Role, listeners: Listeners): Promise<void> {
  if (role === 'worker' || role === 'consumers') {
    listeners.admin = await listen(hub.adminApp, config.host, config.adminPort ?? config.port);
    console.log(`Palai ${role === 'worker' ? 'worker' : 'queue consumers'} running; /metrics, /healthz and /readyz on ${urlOf(config.host, listeners.admin)}`);
    return;
  }
  listeners.api = await listen(hub.app, config.host, config.port);
  // WebSocket upgrades go to the surface module serving their path (no listener when none does: Node then answers every request itself).
  if (hub.upgrade) listeners.api.on('upgrade', hub.upgrade);
  if (config.adminPort !== null) {
    listeners.admin = await listen(hub.adminApp, config.host, config.adminPort);
    console.log(`Operator endpoints (/metrics, /healthz, /readyz) on ${urlOf(config.host, listeners.admin)}`);
  }
  console.log(`Palai listening on ${urlOf(config.host, listeners.api)}`);
}

/**
 * The operator socket, so that `palai projects`, `keys`, `agents`, `doctor` and
 * `outbox` work while this process holds the embedded store; a hub that cannot
 * offer it says why and runs on without it.
 */
async function offerOperatorSocket(hub: Hub, config: PalaiConfig, listeners: Listeners): Promise<OperatorSocket | null> {
  const { openOperatorSocket } = await import('../operator-socket/server.js');
  const apiUrl = () => (listeners.api ? urlOf(config.host, listeners.api) : null);
  try {
    const socket = await openOperatorSocket({ home: config.home, hub, apiUrl });
    console.log(`Operator socket: ${socket.path} (palai commands on this store run through it)`);
    return socket;
  } catch (error) {
    console.error(`No operator socket (${messageOf(error)}): other palai commands cannot open this store while this hub runs.`);
    return null;
  }
}

const urlOf = (host: string, server: Server): string => printableUrl(host, (server.address() as AddressInfo).port);

/** First start on an empty store: one project and one key; the key is printed this once. */
async function bootstrap(hub: Hub, config: PalaiConfig): Promise<void> {
  let created;
  try {
    created = await bootstrapIfEmpty(hub.kernel.db, config.bootstrapApiKey);
  } catch (error) {
    throw config.bootstrapApiKey && error instanceof PalaiError ? new CliError(`PALAI_BOOTSTRAP_API_KEY was not accepted: ${error.message}`) : error;
  }
  if (!created) return;
  if (config.bootstrapApiKey) {
    console.log(`Created project ${created.project.id} with the API key from PALAI_BOOTSTRAP_API_KEY (key ${created.key.id}).`);
  } else {
    console.log(`Created project ${created.project.id} and API key (shown once): ${created.key.secret}`);
  }
}

async function listen(app: Express, host: string, port: number): Promise<Server> {
  // Loaded here: it pulls in the HTTP surface, which the other commands never need.
  const { answerClientError } = await import('../../adapters/http/client-error.js');
  const server = createServer(app);
  server.on('clientError', answerClientError);
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new CliError(`Port ${port} on ${host} is already in use; choose another with --port or PORT.`));
      else if (error.code === 'EACCES') reject(new CliError(`Not allowed to listen on port ${port} on ${host}; choose a port above 1023.`));
      else if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN')
        reject(new CliError(`HOST ${host} does not resolve to an address; set HOST to an address of this machine.`));
      else if (error.code === 'EADDRNOTAVAIL')
        reject(new CliError(`HOST ${host} is not an address of this machine; set HOST to one of its addresses, or 0.0.0.0 for all.`));
      else reject(error);
    });
    server.listen(port, host, () => resolve(server));
  });
}

/** A URL someone can open: a wildcard bind address is shown as the loopback one. */
export function printableUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? 'localhost' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/** Resolves on the first SIGINT/SIGTERM; a second one means "stop now". */
export function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
      process.once('SIGINT', forceExit).once('SIGTERM', forceExit);
      resolve(signal);
    };
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  });
}

function forceExit(): void {
  console.error('Stopping immediately; running responses are taken over once their leases expire.');
  process.exit(1);
}
