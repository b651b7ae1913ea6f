// `palai bot slack --bot <id or name>`: one Slack bot's Socket Mode connection,
// alone, until SIGINT or SIGTERM. The process is also a worker, so the
// responses the bot admits run here and their answers are posted; the
// connection follows the bot's cluster-wide lease, so a `palai serve` holding it
// keeps it until it stops.
import type { Command } from 'commander';
import { loadConfig } from '../../core/config.js';
import type { SlackSocketSupervisor } from '../../bots/slack/socket/supervisor.js';
import type { Hub } from '../hub.js';
import { shutDown } from '../shutdown.js';
import { nextSignal } from './serve.js';
import { explainHubRunning, storeLabel } from './store.js';

export function registerBot(program: Command): void {
  const bot = program.command('bot').description('run a bot surface on its own');
  bot
    .command('slack')
    .description("hold one Slack bot's Socket Mode connection and run the responses it admits, until stopped")
    .requiredOption('--bot <id or name>', 'the Slack bot in socket mode (its id, or its name when no other bot in socket mode has it)')
    .action(slack);
}

async function slack(options: { bot: string }): Promise<void> {
  const config = loadConfig();
  // Listening from the start: a signal during start-up stops once started instead of killing it.
  const stop = nextSignal();
  let hub: Hub;
  try {
    // Loaded here so the other commands skip the HTTP stack's and the Slack SDK's start-up cost.
    const { startHub } = await import('../hub.js');
    hub = await startHub({ config, role: 'worker' });
  } catch (error) {
    throw await explainHubRunning(
      error,
      config,
      'palai bot slack runs a hub of its own, so stop that one first (unless started with --role api or worker, it holds the Socket Mode connections of every bot itself).',
    );
  }
  let supervisor: SlackSocketSupervisor;
  try {
    supervisor = hub.surfaces.slack.socketsOf(options.bot);
    await supervisor.start();
  } catch (error) {
    await hub.close().catch(() => undefined);
    throw error;
  }
  console.log(`Store: ${storeLabel(config)}`);
  console.log(`Slack bot ${options.bot}: Socket Mode, connecting as ${supervisor.owner} once no other process holds the connection; stop with Ctrl-C.`);
  const signal = await stop;
  console.error(`Received ${signal}; disconnecting, then finishing running work for up to ${config.shutdownGraceSeconds}s (send it again to stop at once).`);
  // Disconnected first: no new event is admitted while the running work drains.
  await supervisor.stop();
  await shutDown(hub, { api: null, admin: null }, config.shutdownGraceSeconds * 1000, (line) => console.error(line));
  console.error('Palai stopped.');
}
