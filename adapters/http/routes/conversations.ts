// OpenAI's Conversations API over Palai sessions: a conversation is a session
// (same id), its items the session's items. One created here has no agent until
// its first response names one; from then on it is that agent's session.
import type { KernelApi } from '../../../core/api/index.js';
import type { Conversation, Session } from '../../../generated/schemas.js';
import type { OperationHandlers } from '../operations.js';

const conversationOf = (session: Session): Conversation => ({
  id: session.id,
  object: 'conversation',
  created_at: session.created_at,
  metadata: session.metadata,
});

export function conversationHandlers({ sessions }: KernelApi): OperationHandlers {
  return {
    createConversation: async (_req, res, { projectId, body, idempotency, replay }) => {
      const session = replay
        ? await sessions.get(projectId, replay.resourceId)
        : await sessions.create(projectId, { metadata: body.metadata ?? undefined, items: body.items ?? undefined }, { idempotency });
      res.json(conversationOf(session));
    },
    getConversation: async (_req, res, { projectId, params }) => {
      res.json(conversationOf(await sessions.get(projectId, params.conversation_id)));
    },
    updateConversation: async (_req, res, { projectId, params, body, idempotency, replay }) => {
      const id = params.conversation_id;
      res.json(conversationOf(replay ? await sessions.get(projectId, id) : await sessions.updateMetadata(projectId, id, body.metadata, { idempotency })));
    },
    deleteConversation: async (_req, res, { projectId, params }) => {
      await sessions.delete(projectId, params.conversation_id);
      res.json({ id: params.conversation_id, object: 'conversation.deleted', deleted: true });
    },
    listConversationItems: async (_req, res, { projectId, params, query }) => {
      res.json(await sessions.items(projectId, params.conversation_id, { limit: query.limit, after: query.after, order: query.order ?? 'desc' }));
    },
    createConversationItems: async (_req, res, { projectId, params, body, idempotency }) => {
      res.json(await sessions.addItems(projectId, params.conversation_id, body.items, { idempotency }));
    },
    getConversationItem: async (_req, res, { projectId, params }) => {
      res.json(await sessions.item(projectId, params.conversation_id, params.item_id));
    },
    deleteConversationItem: async (_req, res, { projectId, params }) => {
      await sessions.deleteItem(projectId, params.conversation_id, params.item_id);
      res.json(conversationOf(await sessions.get(projectId, params.conversation_id)));
    },
  };
}
