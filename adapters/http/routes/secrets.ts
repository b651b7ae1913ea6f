import type { KernelApi } from '../../../core/api/index.js';
import type { OperationHandlers } from '../operations.js';

/** /v1/secrets: named project secrets; no answer carries a value. */
export function secretHandlers({ projectSecrets }: KernelApi): OperationHandlers {
  return {
    createSecret: async (_req, res, { projectId, body }) => {
      res.status(201).json(await projectSecrets.create(projectId, body));
    },
    listSecrets: async (_req, res, { projectId }) => {
      res.json(await projectSecrets.list(projectId));
    },
    deleteSecret: async (_req, res, { projectId, params }) => {
      const id = await projectSecrets.delete(projectId, params.secret);
      res.json({ id, object: 'secret.deleted', deleted: true });
    },
  };
}
