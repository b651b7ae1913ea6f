// `palai node run | status`: the companion that pairs this machine with a hub
// and runs the commands an agent sends it (adapters/nodes/companion). It opens
// no store and loads nothing of the hub.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { CommandContext } from './context.js';

/** A bad config or command line: the companion did not start. */
const CONFIG_EXIT_CODE = 2;

export function registerNode(program: Command, context: CommandContext): void {
  const node = program.command('node').description('the companion: pair this machine with a hub and run the commands its agents send');
  node
    .command('run')
    .description('connect to the hub and run approved commands until stopped (SIGTERM lets running commands finish; SIGHUP reloads the config)')
    .requiredOption('--hub <url>', "the hub's node endpoint, ws(s)://host/v1/nodes/connect")
    .requiredOption('--config <file>', 'the operator config, palai-node.yaml')
    .requiredOption('--home <dir>', "the node's home: its identity, state and ledger")
    .option('--token <token>', 'an enrollment token, presented until the node is paired (or PALAI_NODE_TOKEN)')
    .action((options: { hub: string; config: string; home: string; token?: string }) => run(context, options));
  node
    .command('status')
    .description("the node's id, its hub, its pairing and a summary of its ledger")
    .requiredOption('--home <dir>', "the node's home")
    .action((options: { home: string }) => status(context, options));
}

async function run(context: CommandContext, options: { hub: string; config: string; home: string; token?: string }): Promise<void> {
  const [{ runCompanion }, { CompanionConfigError }, { HomeInUseError }] = await Promise.all([
    import('../../adapters/nodes/companion/companion.js'),
    import('../../adapters/nodes/companion/config.js'),
    import('../../adapters/nodes/companion/home.js'),
  ]);
  const token = options.token ?? process.env.PALAI_NODE_TOKEN;
  try {
    context.exitCode = await runCompanion({
      hub: options.hub,
      configPath: context.resolvePath(options.config),
      home: context.resolvePath(options.home),
      ...(token ? { token } : {}),
      clientVersion: packageVersion(),
      log: (line) => context.err(`palai node: ${line}`),
      stopSignal: signals(),
      onReload: (reload) => void process.on('SIGHUP', reload),
    });
  } catch (error) {
    if (error instanceof HomeInUseError) {
      context.err(`palai node: ${error.message}`);
      context.exitCode = 1;
      return;
    }
    if (!(error instanceof CompanionConfigError)) throw error;
    context.err(`palai node: ${error.message}`);
    for (const detail of error.details) context.err(`  ${detail}`);
    context.exitCode = CONFIG_EXIT_CODE;
  }
}

async function status(context: CommandContext, options: { home: string }): Promise<void> {
  const { statusLines } = await import('../../adapters/nodes/companion/status.js');
  const home = context.resolvePath(options.home);
  const lines = statusLines(home);
  if (!lines) {
    context.err(`palai node: no node identity in ${home} (palai node run makes one)`);
    context.exitCode = 1;
    return;
  }
  for (const line of lines) context.out(line);
}

/** Each call resolves with the next SIGTERM or SIGINT after it. */
function signals(): () => Promise<string> {
  const waiting: ((signal: string) => void)[] = [];
  const on = (signal: string) => waiting.splice(0).forEach((resolve) => resolve(signal));
  process.on('SIGTERM', on);
  process.on('SIGINT', on);
  return () => new Promise((resolve) => waiting.push(resolve));
}

/** Palai's version: package.json two directories up from cli/commands/node.ts, three from its compiled copy. */
function packageVersion(): string {
  const here = import.meta.url.endsWith('.js') ? '../../../package.json' : '../../package.json';
  return (JSON.parse(readFileSync(new URL(here, import.meta.url), 'utf8')) as { version: string }).version;
}
