import type { KernelApi } from '../../../core/api/index.js';
import type { OperationHandlers } from '../operations.js';

export function sessionHandlers({ sessions }: KernelApi): OperationHandlers {
  return {
    createSession: async (_req, res, { projectId, body, idempotency, replay }) => {
      res.status(201).json(replay ? await sessions.get(projectId, replay.resourceId) : await sessions.create(projectId, body, { idempotency }));
    },
    getSession: async (_req, res, { projectId, params }) => {
      res.json(await sessions.get(projectId, params.session_id));
    },
    deleteSession: async (_req, res, { projectId, params }) => {
      await sessions.delete(projectId, params.session_id);
      res.json({ id: params.session_id, object: 'session.deleted', deleted: true });
    },
    listSessionItems: async (_req, res, { projectId, params, query }) => {
      res.json(await sessions.items(projectId, params.session_id, query));
    },
  };
}
