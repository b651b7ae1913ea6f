// `palai migrate`: applies pending schema migrations (serve does this too on
// start; this command lets an operator do it ahead of a rollout). It does not
// run through a hub holding the embedded store: that hub applied the migrations
// it knows when it started, and a newer installation's must wait until it stops.
import type { Command } from 'commander';
import { loadMigrations, migrate } from '../../core/store/migrate.js';
import type { CommandContext } from './context.js';
import { explainHubRunning, explainStoreError, storeLabel, withStore } from './store.js';

export function registerMigrate(program: Command, context: CommandContext): void {
  program
    .command('migrate')
    .description('apply pending database migrations and say which')
    .action(async () => {
      const config = context.config();
      const migrations = loadMigrations();
      const work = withStore(
        context,
        async (db) => {
          const applied = await migrate(db, migrations).catch((error) => {
            throw explainStoreError(error, config);
          });
          if (applied.length === 0) {
            context.out(`Up to date: all ${migrations.length} migration(s) are applied (${storeLabel(config)}).`);
            return;
          }
          for (const version of applied) {
            const name = migrations.find((m) => m.version === version)?.name ?? '';
            context.out(`Applied migration ${String(version).padStart(4, '0')}_${name}`);
          }
          context.out(`Up to date (${storeLabel(config)}).`);
        },
        { migrate: false },
      );
      await work.catch(async (error) => {
        throw await explainHubRunning(error, config, 'it applied the migrations it knows when it started: stop it, then run palai migrate.');
      });
    });
}
