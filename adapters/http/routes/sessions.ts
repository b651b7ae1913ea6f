import { createSession, deleteSession, listSessionItems, requireSession } from '../../../core/sessions/sessions.js';
import type { Kernel } from '../../../core/kernel.js';
import type { OperationHandlers } from '../operations.js';

export function sessionHandlers({ db }: Kernel): OperationHandlers {
  return {
    createSession: async (_req, res, { projectId, body, idempotency }) => {
      res.status(201).json(await createSession(db, projectId, body, idempotency));
    },
    getSession: async (_req, res, { projectId, params }) => {
      res.json(await requireSession(db, projectId, params.session_id));
    },
    deleteSession: async (_req, res, { projectId, params }) => {
      await deleteSession(db, projectId, params.session_id);
      res.json({ id: params.session_id, object: 'session.deleted', deleted: true });
    },
    listSessionItems: async (_req, res, { projectId, params, query }) => {
      res.json(await listSessionItems(db, projectId, params.session_id, query));
    },
  };
}
