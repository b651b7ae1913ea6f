import { connectionView, createConnection, deleteConnection, listConnections, requireConnection } from '../../../core/models/connections.js';
import type { Kernel } from '../../../core/kernel.js';
import type { OperationHandlers } from '../operations.js';

export function modelConnectionHandlers({ db, secrets, config }: Kernel): OperationHandlers {
  return {
    createModelConnection: async (_req, res, { projectId, body, idempotency }) => {
      res.status(201).json(await createConnection(db, secrets, projectId, body, config.keyEnvAllowlist, idempotency));
    },
    listModelConnections: async (_req, res, { projectId, query }) => {
      res.json(await listConnections(db, projectId, query));
    },
    getModelConnection: async (_req, res, { projectId, params }) => {
      res.json(connectionView(await requireConnection(db, projectId, params.connection)));
    },
    deleteModelConnection: async (_req, res, { projectId, params }) => {
      const id = await deleteConnection(db, projectId, params.connection);
      res.json({ id, object: 'model_connection.deleted', deleted: true });
    },
  };
}
