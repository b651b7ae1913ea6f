// The `palai` command line: parses arguments, runs one command, and turns any
// failure into one line on stderr and a non-zero exit code.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';

type Register = (program: Command) => void;

/**
 * Each command's module, in the order the help lists them. A command line loads
 * only the module of the command it names (--version none; the help and an
 * unknown command all of them), so a one-shot command does not pay for the HTTP
 * stack or the other commands' libraries.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  serve: async () => (await import('./commands/serve.js')).registerServe,
  migrate: async () => (await import('./commands/migrate.js')).registerMigrate,
  projects: async () => (await import('./commands/projects.js')).registerProjects,
  keys: async () => (await import('./commands/keys.js')).registerKeys,
  agents: async () => (await import('./commands/agents.js')).registerAgents,
  doctor: async () => (await import('./commands/doctor.js')).registerDoctor,
  outbox: async () => (await import('./commands/outbox.js')).registerOutbox,
  mcp: async () => (await import('./commands/mcp.js')).registerMcp,
  bot: async () => (await import('./commands/bot.js')).registerBot,
};

/** Exit code of a command line that could not be parsed (unknown command, missing argument). */
const USAGE_EXIT_CODE = 2;
/** After a command finished, a stray open handle (say, a hung database socket) must not keep the process alive. */
const EXIT_GRACE_MS = 3_000;

/** Palai's package.json: one directory up from cli/main.ts, two from its compiled copy in dist/cli/. */
function packageVersion(): string {
  const here = import.meta.url.endsWith('.js') ? '../../package.json' : '../package.json';
  return (JSON.parse(readFileSync(new URL(here, import.meta.url), 'utf8')) as { version: string }).version;
}

const version = packageVersion();

const program = new Command('palai')
  .description('Palai: a self-hostable, durable agent execution hub.')
  .version(version, '-v, --version')
  .exitOverride()
  .showHelpAfterError('(palai --help lists the commands)');

const named = process.argv[2];
const loads =
  named === '-v' || named === '--version' ? [] : named !== undefined && Object.hasOwn(COMMANDS, named) ? [COMMANDS[named]] : Object.values(COMMANDS);
for (const register of await Promise.all(loads.map((load) => load()))) register(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has already printed the usage message (or the help text).
    process.exitCode = error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
  } else {
    const { errorLines } = await import('./commands/errors.js');
    const [first, ...rest] = errorLines(error);
    process.stderr.write([`palai: ${first}`, ...rest].join('\n') + '\n');
    process.exitCode = 1;
  }
}
setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
