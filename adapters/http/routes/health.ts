import { readFileSync } from 'node:fs';
import type { KernelApi } from '../../../core/api/index.js';
import { PalaiError } from '../../../core/errors/palai-error.js';
import type { OperationHandlers } from '../operations.js';

const openApiDocument = readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8');

export function healthHandlers({ operator, lifecycle }: KernelApi): OperationHandlers {
  return {
    getHealth: (_req, res) => {
      res.json({ status: 'ok' });
    },
    getReadiness: async (_req, res) => {
      // A stopping process takes no new traffic, but stays healthy while it finishes its runs.
      if (lifecycle.draining.aborted) throw new PalaiError('shutting-down', 'This process is shutting down.');
      res.json({ status: 'ready', ...(await operator.readiness()) });
    },
    getMetrics: async (_req, res) => {
      const { contentType, body } = await operator.metrics();
      res.type(contentType).send(body);
    },
    getOpenApiDocument: (_req, res) => {
      res.type('application/json').send(openApiDocument);
    },
  };
}
