// A companion's invocation side alone, in its own process, so a test can
// SIGKILL it mid-command: `<home> <config> <plan.json>`; each frame it would
// send is one JSON line on stdout.
import { readFileSync } from 'node:fs';
import type { NodeExecutionPlan } from '../../generated/protocol-schemas.js';
import { deriveCatalog } from '../../adapters/nodes/companion/catalog.js';
import { loadCompanionConfig } from '../../adapters/nodes/companion/config.js';
import { ledgerDir, loadOrCreateIdentity } from '../../adapters/nodes/companion/home.js';
import { Invocations } from '../../adapters/nodes/companion/invocations.js';
import { Ledger } from '../../adapters/nodes/companion/ledger.js';

const [home, configPath, planPath] = process.argv.slice(2);
const { config } = loadCompanionConfig(configPath);
const { catalog, hash } = deriveCatalog(config);
const invocations = new Invocations({
  nodeId: loadOrCreateIdentity(home).nodeId,
  config,
  catalog,
  catalogHash: hash,
  ledger: Ledger.open(ledgerDir(home)),
  defaultDirectory: home,
  approvedCommands: () => config.policy.allowedCommands,
});
invocations.connect((frame) => process.stdout.write(`${JSON.stringify(frame)}\n`));
await invocations.invoke(JSON.parse(readFileSync(planPath, 'utf8')) as NodeExecutionPlan);
