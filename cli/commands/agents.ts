// `palai agents apply -f file.yaml`: declarative create-or-update of agents by
// name. Every spec in the file is validated (agent-file.ts), and what it refers
// to looked up, before any is applied, so a bad file changes nothing. What would
// stop an applied agent's runs from this machine (a key not set) is printed under it.
import type { Command } from 'commander';
import type { CommandContext } from './context.js';
import { projectFor } from './project.js';
import { modelAccess, withStore } from './store.js';

export function registerAgents(program: Command, context: CommandContext): void {
  const agents = program.command('agents').description('manage agents');
  agents
    .command('apply')
    .description('create or update the agents a YAML file describes (one spec, a list, or several documents)')
    .requiredOption('-f, --file <path>', 'YAML file with the CreateAgentRequest fields of each agent; - reads stdin')
    .option('--project <id|name>', 'project the agents belong to (default: the only project; required when there are several)')
    .action(async (options: { file: string; project?: string }) => {
      // Loaded here: the request validators and the YAML parser are costly to load, and no other command needs them.
      const [{ readAgentFile, checkReferences }, { applyAgent }, { modelConnection }] = await Promise.all([
        import('./agent-file.js'),
        import('../../core/agents/agents.js'),
        import('../../core/models/resolve.js'),
      ]);
      const { label, agents } = await readAgentFile(context, options.file);
      await withStore(context, async (db) => {
        const project = await projectFor(db, options.project);
        await checkReferences(label, agents, async (request) => void (await modelConnection(db, project.id, request.model)));
        const access = modelAccess(context.config());
        for (const { request } of agents) {
          const { agent, action } = await applyAgent(db, project.id, request, access);
          context.out(`${action} ${agent.name} (revision ${agent.revision})`);
          for (const warning of agent.warnings ?? []) context.out(`  warning: ${warning.pointer}: ${warning.detail}`);
        }
      });
    });
}
