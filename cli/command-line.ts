// One `palai` command line, run against a command context: parsed, run, and any
// failure turned into one line on the context's stderr and an exit code.
// main.ts runs command lines in this process; the operator socket runs the ones
// it is sent inside the hub.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import type { CommandContext } from './commands/context.js';

type Register = (program: Command, context: CommandContext) => void;

interface CommandModule {
  load: () => Promise<Register>;
  /** Sent to the running hub when it holds the embedded store, and run there on its store. */
  viaHub: boolean;
}

/**
 * Each command's module, in the order the help lists them. A command line loads
 * only the module of the command it names (--version none; the help and an
 * unknown command all of them), so a one-shot command does not pay for the HTTP
 * stack or the other commands' libraries. The ones not sent to the hub run a hub
 * themselves (serve, bot, mcp) or must not run beside one (migrate).
 */
const COMMANDS: Record<string, CommandModule> = {
  serve: { load: async () => (await import('./commands/serve.js')).registerServe, viaHub: false },
  migrate: { load: async () => (await import('./commands/migrate.js')).registerMigrate, viaHub: false },
  projects: { load: async () => (await import('./commands/projects.js')).registerProjects, viaHub: true },
  keys: { load: async () => (await import('./commands/keys.js')).registerKeys, viaHub: true },
  agents: { load: async () => (await import('./commands/agents.js')).registerAgents, viaHub: true },
  doctor: { load: async () => (await import('./commands/doctor.js')).registerDoctor, viaHub: true },
  outbox: { load: async () => (await import('./commands/outbox.js')).registerOutbox, viaHub: true },
  nodes: { load: async () => (await import('./commands/nodes.js')).registerNodes, viaHub: true },
  objectives: { load: async () => (await import('./commands/objectives.js')).registerObjectives, viaHub: true },
  mcp: { load: async () => (await import('./commands/mcp.js')).registerMcp, viaHub: false },
  bot: { load: async () => (await import('./commands/bot.js')).registerBot, viaHub: false },
  node: { load: async () => (await import('./commands/node.js')).registerNode, viaHub: false },
};

/** True when the command line names a command the running hub runs on its store. */
export function runsViaHub(argv: readonly string[]): boolean {
  const named = argv[0];
  return named !== undefined && Object.hasOwn(COMMANDS, named) && COMMANDS[named].viaHub;
}

/** Exit code of a command line that could not be parsed (unknown command, missing argument). */
const USAGE_EXIT_CODE = 2;

/** Palai's package.json: one directory up from cli/command-line.ts, two from its compiled copy in dist/cli/. */
function packageVersion(): string {
  const here = import.meta.url.endsWith('.js') ? '../../package.json' : '../package.json';
  return (JSON.parse(readFileSync(new URL(here, import.meta.url), 'utf8')) as { version: string }).version;
}

export interface CommandLineOptions {
  /** Knows only the commands the hub runs, so a command line sent to the hub can never start a second hub inside it. */
  viaHubOnly?: boolean;
  /** The terminal width the help is wrapped to (default: this process's terminal, else 80 columns). */
  helpWidth?: number;
}

/** Runs `argv` (the words after `palai`) and returns its exit code. */
export async function runCommandLine(argv: string[], context: CommandContext, options: CommandLineOptions = {}): Promise<number> {
  const { helpWidth } = options;
  const width = helpWidth === undefined ? {} : { getOutHelpWidth: () => helpWidth, getErrHelpWidth: () => helpWidth };
  const known = Object.entries(COMMANDS).filter(([, command]) => command.viaHub || !options.viaHubOnly);
  const program = new Command('palai')
    .description('Palai: a self-hostable, durable agent execution hub.')
    .configureOutput({ writeOut: (text) => context.write('stdout', text), writeErr: (text) => context.write('stderr', text), ...width })
    .version(packageVersion(), '-v, --version')
    .exitOverride()
    .showHelpAfterError('(palai --help lists the commands)');
  const named = argv[0];
  const chosen = known.find(([name]) => name === named);
  const loads = named === '-v' || named === '--version' ? [] : chosen ? [chosen[1].load] : known.map(([, command]) => command.load);
  for (const register of await Promise.all(loads.map((load) => load()))) register(program, context);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return context.exitCode;
  } catch (error) {
    // Commander has already written the usage message (or the help text).
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
    const { errorLines } = await import('./commands/errors.js');
    const [first, ...rest] = errorLines(error);
    context.write('stderr', [`palai: ${first}`, ...rest].join('\n') + '\n');
    return 1;
  }
}
