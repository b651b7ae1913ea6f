// `palai keys create|list|revoke`: API key administration straight on the store.
// A secret is printed once, to stdout, when its key is created; lists show only its prefix.
import type { Command } from 'commander';
import { createApiKey, findApiKey, listApiKeys, revokeApiKey } from '../../core/auth/api-keys.js';
import { createProjectWithKey, findProject, listProjects } from '../../core/auth/projects.js';
import type { CommandContext } from './context.js';
import { CliError } from './errors.js';
import { projectFor } from './project.js';
import { withStore } from './store.js';

export function registerKeys(program: Command, context: CommandContext): void {
  const keys = program.command('keys').description('manage API keys (a secret is shown only when its key is created)');

  keys
    .command('create')
    .description('create an API key and print its secret once')
    .option('--project <id|name>', 'project the key belongs to (required when the store has several; "default" is created in an empty store)')
    .option('--name <name>', 'a label for the key', 'default')
    .action(async (options: { project?: string; name: string }) => {
      await withStore(context, async (db) => {
        const existing = await projectFor(db, options.project, true);
        const { project, key } = existing
          ? { project: existing, key: await createApiKey(db, existing.id, options.name) }
          : await createProjectWithKey(db, options.project ?? 'default', options.name);
        if (!existing) context.err(`Created project ${project.id} (${project.name}).`);
        context.out(`Created API key ${key.id} (${key.name}) for project ${project.id} (${project.name}).`);
        context.out(`Secret (shown once, store it now): ${key.secret}`);
      });
    });

  keys
    .command('list')
    .description('list API keys (never their secrets)')
    .option('--project <id|name>', 'only the keys of this project')
    .action(async (options: { project?: string }) => {
      await withStore(context, async (db) => {
        const project = options.project ? await projectFor(db, options.project) : null;
        const rows = await listApiKeys(db, project?.id);
        if (rows.length === 0) {
          context.out(
            project
              ? `No API keys in project ${project.id} (${project.name}). Create one with: palai keys create --project ${project.name}`
              : 'No API keys. Create one with: palai keys create',
          );
          return;
        }
        const names = new Map((await listProjects(db)).map((p) => [p.id, p.name]));
        printTable(
          context,
          ['ID', 'PROJECT', 'NAME', 'PREFIX', 'CREATED', 'REVOKED'],
          rows.map((k) => [
            k.id,
            `${k.project_id} (${names.get(k.project_id) ?? '?'})`,
            k.name,
            `${k.prefix}…`,
            k.created_at.toISOString(),
            k.revoked_at ? k.revoked_at.toISOString() : '-',
          ]),
        );
      });
    });

  keys
    .command('revoke')
    .description('revoke an API key; requests with it are refused from then on')
    .argument('<key_id>', 'the key id (key_…), as `palai keys list` shows it')
    .action(async (keyId: string) => {
      await withStore(context, async (db) => {
        const revoked = await revokeApiKey(db, keyId);
        const key = await findApiKey(db, keyId);
        if (!key) throw new CliError(`No API key ${JSON.stringify(keyId)}; see palai keys list.`);
        // Revoking twice is not a failure: the key ends up revoked either way, so scripts may repeat it.
        if (!revoked) {
          context.out(`API key ${keyId} was already revoked (${key.revoked_at?.toISOString()}).`);
          return;
        }
        const project = await findProject(db, key.project_id);
        const label = project ? `${project.id} (${project.name})` : key.project_id;
        context.out(`Revoked API key ${keyId} (${key.name}) of project ${label}.`);
        // A project without an active key is unreachable over the API; say so while the operator is here.
        if (project && (await listApiKeys(db, project.id)).every((k) => k.revoked_at)) {
          context.err(`Project ${label} has no active API key left; create one with: palai keys create --project ${project.name}`);
        }
      });
    });
}

export function printTable(context: CommandContext, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const row of [header, ...rows])
    context.out(
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    );
}
