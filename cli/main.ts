// The `palai` command line: runs one command and exits with its code. A command
// that works on the store goes to the running hub when one holds the embedded
// store and answers on its operator socket; otherwise it runs here.
import { runCommandLine, runsViaHub } from './command-line.js';
import { localContext } from './commands/context.js';

/** After a command finished, a stray open handle (say, a hung database socket) must not keep the process alive. */
const EXIT_GRACE_MS = 3_000;

/** The exit code of `argv` run by the hub holding the embedded store, or null when none answers. */
async function runOnRunningHub(argv: string[]): Promise<number | null> {
  if (!runsViaHub(argv)) return null;
  const { loadConfig } = await import('../core/config.js');
  let home: string;
  try {
    const config = loadConfig();
    if (config.databaseUrl) return null;
    home = config.home;
  } catch {
    // The command itself reports the invalid setting.
    return null;
  }
  const { runOnHub } = await import('./operator-socket/client.js');
  return runOnHub(home, argv);
}

const argv = process.argv.slice(2);
process.exitCode = (await runOnRunningHub(argv)) ?? (await runCommandLine(argv, localContext()));
setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
