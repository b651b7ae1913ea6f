// `palai projects create|list`: the tenants of a hub. A project is created with
// its first API key in one transaction, so it is reachable from the start; the
// key's secret is printed once, to stdout, like `palai keys create` does.
import type { Command } from 'commander';
import { createProjectWithKey, findProject, listProjectSummaries, PROJECT_NAME_RULE, projectNameProblem } from '../../core/auth/projects.js';
import type { CommandContext } from './context.js';
import { CliError } from './errors.js';
import { printTable } from './keys.js';
import { withStore } from './store.js';

export function registerProjects(program: Command, context: CommandContext): void {
  const projects = program.command('projects').description('manage projects (each has its own API keys, agents and data)');

  projects
    .command('create')
    .description('create a project with its first API key and print the secret once')
    .argument('<name>', `the project's name: ${PROJECT_NAME_RULE}`)
    .option('--key-name <name>', 'a label for the first key', 'default')
    .action(async (name: string, options: { keyName: string }) => {
      // Checked before the store is opened: a typo creates nothing, not even an embedded store.
      const problem = projectNameProblem(name);
      if (problem) throw new CliError(problem);
      await withStore(context, async (db) => {
        const taken = await findProject(db, name);
        if (taken) throw new CliError(`A project named ${JSON.stringify(name)} already exists (${taken.id}); see palai projects list.`);
        const { project, key } = await createProjectWithKey(db, name, options.keyName);
        context.out(`Created project ${project.id} (${project.name}).`);
        context.out(`Created API key ${key.id} (${key.name}) for project ${project.id} (${project.name}).`);
        context.out(`Secret (shown once, store it now): ${key.secret}`);
      });
    });

  projects
    .command('list')
    .description('list projects with their number of active API keys')
    .action(async () => {
      await withStore(context, async (db) => {
        const rows = await listProjectSummaries(db);
        if (rows.length === 0) {
          context.out('No projects. Create one with: palai projects create NAME');
          return;
        }
        printTable(
          context,
          ['ID', 'NAME', 'CREATED', 'ACTIVE_KEYS'],
          rows.map((p) => [p.id, p.name, p.created_at.toISOString(), String(p.active_keys)]),
        );
      });
    });
}
