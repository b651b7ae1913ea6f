// The `palai` command line: parses arguments, runs one command, and turns any
// failure into one line on stderr and a non-zero exit code.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { registerAgents } from './commands/agents.js';
import { registerDoctor } from './commands/doctor.js';
import { errorLines } from './commands/errors.js';
import { registerKeys } from './commands/keys.js';
import { registerMcp } from './commands/mcp.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOutbox } from './commands/outbox.js';
import { registerProjects } from './commands/projects.js';
import { registerServe } from './commands/serve.js';

/** Exit code of a command line that could not be parsed (unknown command, missing argument). */
const USAGE_EXIT_CODE = 2;
/** After a command finished, a stray open handle (say, a hung database socket) must not keep the process alive. */
const EXIT_GRACE_MS = 3_000;

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command('palai')
  .description('Palai: a self-hostable, durable agent execution hub.')
  .version(version, '-v, --version')
  .exitOverride()
  .showHelpAfterError('(palai --help lists the commands)');

registerServe(program);
registerMigrate(program);
registerProjects(program);
registerKeys(program);
registerAgents(program);
registerDoctor(program);
registerOutbox(program);
registerMcp(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has already printed the usage message (or the help text).
    process.exitCode = error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
  } else {
    const [first, ...rest] = errorLines(error);
    process.stderr.write([`palai: ${first}`, ...rest].join('\n') + '\n');
    process.exitCode = 1;
  }
}
setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
