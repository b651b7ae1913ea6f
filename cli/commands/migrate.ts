// `palai migrate`: applies pending schema migrations (serve does this too on
// start; this command lets an operator do it ahead of a rollout).
import type { Command } from 'commander';
import { loadConfig } from '../../core/config.js';
import { loadMigrations, migrate } from '../../core/store/migrate.js';
import { explainStoreError, storeLabel, withStore } from './store.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations and say which')
    .action(async () => {
      const config = loadConfig();
      const migrations = loadMigrations();
      await withStore(
        config,
        async (db) => {
          const applied = await migrate(db, migrations).catch((error) => {
            throw explainStoreError(error, config);
          });
          if (applied.length === 0) {
            console.log(`Up to date: all ${migrations.length} migration(s) are applied (${storeLabel(config)}).`);
            return;
          }
          for (const version of applied) {
            const name = migrations.find((m) => m.version === version)?.name ?? '';
            console.log(`Applied migration ${String(version).padStart(4, '0')}_${name}`);
          }
          console.log(`Up to date (${storeLabel(config)}).`);
        },
        { migrate: false },
      );
    });
}
