// `palai keys create|list|revoke`: API key administration straight on the store.
// A secret is printed once, when its key is created; lists show only its prefix.
import type { Command } from 'commander';
import { createApiKey, listApiKeys, revokeApiKey } from '../../core/auth/api-keys.js';
import { createProject, listProjects } from '../../core/auth/projects.js';
import { loadConfig } from '../../core/config.js';
import { CliError } from './errors.js';
import { projectFor } from './project.js';
import { withStore } from './store.js';

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('manage API keys (a secret is shown only when its key is created)');

  keys
    .command('create')
    .description('create an API key and print its secret once')
    .option('--project <id|name>', 'project the key belongs to (default: the oldest; "default" is created in an empty store)')
    .option('--name <name>', 'a label for the key', 'default')
    .action(async (options: { project?: string; name: string }) => {
      await withStore(loadConfig(), async (db) => {
        const existing = await projectFor(db, options.project, true);
        const { project, key } = existing
          ? { project: existing, key: await createApiKey(db, existing.id, options.name) }
          : await db.transaction(async (tx) => {
              const project = await createProject(tx, options.project ?? 'default');
              return { project, key: await createApiKey(tx, project.id, options.name) };
            });
        if (!existing) console.error(`Created project ${project.id} (${project.name}).`);
        console.log(`Created API key ${key.id} (${key.name}) for project ${project.id} (${project.name}).`);
        console.log(`Secret (shown once, store it now): ${key.secret}`);
      });
    });

  keys
    .command('list')
    .description('list API keys (never their secrets)')
    .option('--project <id|name>', 'only the keys of this project')
    .action(async (options: { project?: string }) => {
      await withStore(loadConfig(), async (db) => {
        const project = options.project ? await projectFor(db, options.project) : null;
        const rows = await listApiKeys(db, project?.id);
        if (rows.length === 0) {
          console.log('No API keys. Create one with: palai keys create');
          return;
        }
        const names = new Map((await listProjects(db)).map((p) => [p.id, p.name]));
        printTable(
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
      await withStore(loadConfig(), async (db) => {
        if (await revokeApiKey(db, keyId)) {
          console.log(`Revoked API key ${keyId}.`);
          return;
        }
        const key = (await listApiKeys(db)).find((k) => k.id === keyId);
        if (!key) throw new CliError(`No API key ${JSON.stringify(keyId)}; see palai keys list.`);
        console.log(`API key ${keyId} was already revoked (${key.revoked_at?.toISOString()}).`);
      });
    });
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const row of [header, ...rows]) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
}
