import { readFileSync } from 'node:fs';
import { PalaiError } from '../../../core/errors/palai-error.js';
import type { Kernel } from '../../../core/kernel.js';
import { migrationStatus } from '../../../core/store/migrate.js';
import type { OperationHandlers } from '../operations.js';

const openApiDocument = readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8');

export function healthHandlers({ db, metrics, lifecycle }: Kernel): OperationHandlers {
  return {
    getHealth: (_req, res) => {
      res.json({ status: 'ok' });
    },
    getReadiness: async (_req, res) => {
      // A stopping process takes no new traffic, but stays healthy while it finishes its runs.
      if (lifecycle.draining.aborted) throw new PalaiError('shutting-down', 'This process is shutting down.');
      let status;
      try {
        status = await migrationStatus(db);
      } catch {
        throw new PalaiError('not-ready', 'The database cannot be reached.');
      }
      if (status.pending.length > 0) {
        throw new PalaiError('not-ready', `${status.pending.length} migration(s) are not applied yet; run \`palai migrate\`.`);
      }
      res.json({ status: 'ready', store: db.kind, migrations: status.applied });
    },
    getMetrics: async (_req, res) => {
      res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    },
    getOpenApiDocument: (_req, res) => {
      res.type('application/json').send(openApiDocument);
    },
  };
}
