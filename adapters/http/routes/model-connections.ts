import type { KernelApi } from '../../../core/api/index.js';
import type { OperationHandlers } from '../operations.js';

export function modelConnectionHandlers({ connections }: KernelApi): OperationHandlers {
  return {
    createModelConnection: async (_req, res, { projectId, body, idempotency }) => {
      res.status(201).json(await connections.create(projectId, body, { idempotency }));
    },
    listModelConnections: async (_req, res, { projectId, query }) => {
      res.json(await connections.list(projectId, query));
    },
    getModelConnection: async (_req, res, { projectId, params }) => {
      res.json(await connections.get(projectId, params.connection));
    },
    deleteModelConnection: async (_req, res, { projectId, params }) => {
      const id = await connections.delete(projectId, params.connection);
      res.json({ id, object: 'model_connection.deleted', deleted: true });
    },
  };
}
