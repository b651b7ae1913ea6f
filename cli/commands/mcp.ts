// `palai mcp`: serves the agents of a project as MCP tools over stdio, for a
// desktop host that starts a command. With --url it bridges to that hub's /mcp
// (the key from PALAI_API_KEY); without, it runs a hub on the local store as
// `serve` does, on a loopback port only it uses — or, when `palai serve` holds
// the embedded store, bridges to that one. stdout carries the protocol, so
// everything else — logs included — goes to stderr.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { bootstrapIfEmpty } from '../../core/auth/projects.js';
import { loadConfig } from '../../core/config.js';
import { createLogger } from '../../core/logger.js';
import type { Hub } from '../hub.js';
import { CliError, messageOf } from './errors.js';
import { explainStoreError, storeLabel } from './store.js';

const say = (line: string): void => void process.stderr.write(`palai mcp: ${line}\n`);

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('serve the agents as MCP tools over stdio (for a desktop host); the key comes from PALAI_API_KEY')
    .option('--url <hub URL>', 'bridge to this hub (e.g. https://palai.example.com); without it, run on the local store as serve does')
    .action(mcp);
}

async function mcp(options: { url?: string }): Promise<void> {
  let apiKey = process.env.PALAI_API_KEY || undefined;
  let url = options.url;
  let hub: Hub | null = null;
  let listener: Server | null = null;
  try {
    if (url === undefined) {
      ({ hub, listener, url, apiKey } = await localHub(apiKey));
    } else if (!/^https?:\/\//.test(url)) {
      throw new CliError(`--url must be an http(s) URL, not ${JSON.stringify(url)}.`);
    }
    if (!apiKey) throw new CliError('Set PALAI_API_KEY to an API key of the project whose agents to serve.');
    // Loaded here so the other commands skip the MCP SDK's start-up cost.
    const { probeHub, serveStdio } = await import('../../adapters/mcp/stdio-bridge.js');
    await probeHub(url, apiKey).catch((error) => {
      throw new CliError(messageOf(error));
    });
    const bridge = await serveStdio({ url, apiKey, log: say });
    const stop = () => void bridge.close();
    process.once('SIGINT', stop).once('SIGTERM', stop);
    say(`serving the agents of ${url} over stdio`);
    await bridge.closed;
  } finally {
    listener?.closeAllConnections();
    listener?.close();
    await hub?.close().catch(() => undefined);
  }
}

interface LocalHub {
  /** Null when bridging to the `palai serve` that holds the embedded store. */
  hub: Hub | null;
  listener: Server | null;
  url: string;
  apiKey: string | undefined;
}

/**
 * A hub on the local store, listening on a loopback port; an empty store gets
 * its first project and key. When `palai serve` holds the embedded store, that
 * hub's API instead (it says where on its operator socket).
 */
async function localHub(apiKey: string | undefined): Promise<LocalHub> {
  const config = loadConfig();
  const running = config.databaseUrl ? null : await (await import('../operator-socket/client.js')).runningHub(config.home);
  if (running) {
    if (!running.api)
      throw new CliError(
        `palai serve (process ${running.pid}) holds the ${storeLabel(config)} and serves no HTTP API (--role worker or consumers); start palai mcp with --url of a hub that does.`,
      );
    say(`palai serve (process ${running.pid}) holds the ${storeLabel(config)}; bridging to it at ${running.api}`);
    return { hub: null, listener: null, url: running.api, apiKey };
  }
  let hub: Hub;
  try {
    const { startHub } = await import('../hub.js');
    hub = await startHub({ config, logger: createLogger(config.logLevel, process.stderr) });
  } catch (error) {
    throw explainStoreError(error, config);
  }
  try {
    const created = await bootstrapIfEmpty(hub.kernel.db, config.bootstrapApiKey);
    if (created) {
      apiKey ??= config.bootstrapApiKey ?? created.key.secret;
      say(`created project ${created.project.id}${config.bootstrapApiKey ? '' : ` and API key (shown once): ${created.key.secret}`}`);
    }
    say(`store: ${storeLabel(config)}`);
    const listener = createServer(hub.app);
    await new Promise<void>((resolve, reject) => listener.once('error', reject).listen(0, '127.0.0.1', resolve));
    return { hub, listener, url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}`, apiKey };
  } catch (error) {
    await hub.close().catch(() => undefined);
    throw error;
  }
}
