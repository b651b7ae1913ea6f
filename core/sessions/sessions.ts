// Sessions are durable conversations: an ordered list of items that every
// response in the session reads before its own input.
import type { CreateSessionRequest, Item, Session } from '../../generated/schemas.js';
import { requireAgent } from '../agents/agents.js';
import { notFound } from '../errors/palai-error.js';
import { newId } from '../ids.js';
import { unixSeconds } from '../json.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../pagination.js';
import type { Db, Queryable } from '../store/db.js';
import { recordAnswer, reserveKey, type IdempotencyClaim } from '../idempotency/idempotency.js';

interface SessionRow {
  id: string;
  agent_id: string;
  agent_name: string;
  metadata: Record<string, string>;
  created_at: Date;
}

const sessionView = (row: SessionRow): Session => ({
  id: row.id,
  object: 'session',
  agent_id: row.agent_id,
  agent: row.agent_name,
  metadata: row.metadata,
  created_at: unixSeconds(row.created_at)!,
});

async function findSession(db: Queryable, projectId: string, sessionId: string, forUpdate = false): Promise<SessionRow | null> {
  const { rows } = await db.query<SessionRow>(
    `SELECT s.id, s.agent_id, a.name AS agent_name, s.metadata, s.created_at
     FROM sessions s JOIN agents a ON a.id = s.agent_id WHERE s.project_id = $1 AND s.id = $2${forUpdate ? ' FOR UPDATE OF s' : ''}`,
    [projectId, sessionId],
  );
  return rows[0] ?? null;
}

export async function requireSession(db: Queryable, projectId: string, sessionId: string, forUpdate = false): Promise<Session> {
  const row = await findSession(db, projectId, sessionId, forUpdate);
  if (!row) throw notFound('session', sessionId);
  return sessionView(row);
}

export async function createSession(db: Db, projectId: string, request: CreateSessionRequest, idem?: IdempotencyClaim): Promise<Session> {
  return db.transaction(async (tx) => {
    const id = newId('ses');
    await reserveKey(tx, projectId, idem, id);
    const agent = await requireAgent(tx, projectId, request.agent);
    await tx.query('INSERT INTO sessions (id, project_id, agent_id, metadata) VALUES ($1, $2, $3, $4)', [
      id,
      projectId,
      agent.id,
      JSON.stringify(request.metadata ?? {}),
    ]);
    const session = await requireSession(tx, projectId, id);
    await recordAnswer(tx, projectId, idem, 201, session, id);
    return session;
  });
}

export async function deleteSession(db: Db, projectId: string, sessionId: string): Promise<void> {
  const { rowCount } = await db.query('DELETE FROM sessions WHERE project_id = $1 AND id = $2', [projectId, sessionId]);
  if (rowCount === 0) throw notFound('session', sessionId);
}

/** Appends items at the end of the session, in order. Call inside the transaction that produced them. */
export async function appendSessionItems(tx: Queryable, projectId: string, sessionId: string, responseId: string, items: Item[]): Promise<void> {
  if (items.length === 0) return;
  const { rows } = await tx.query<{ item_count: number }>(
    'UPDATE sessions SET item_count = item_count + $2 WHERE id = $1 RETURNING item_count - $2 AS item_count',
    [sessionId, items.length],
  );
  // The session was deleted while the response ran: its items go with it.
  if (rows.length === 0) return;
  let position = rows[0].item_count;
  for (const item of items) {
    await tx.query('INSERT INTO session_items (id, project_id, session_id, position, response_id, item) VALUES ($1, $2, $3, $4, $5, $6)', [
      item.id,
      projectId,
      sessionId,
      position++,
      responseId,
      JSON.stringify(item),
    ]);
  }
}

/** The session's items written before `responseId`'s own input, oldest first. */
export async function sessionHistory(db: Queryable, sessionId: string, responseId: string): Promise<Item[]> {
  const { rows } = await db.query<{ item: Item }>(
    `SELECT item FROM session_items WHERE session_id = $1 AND position < COALESCE(
       (SELECT min(position) FROM session_items WHERE session_id = $1 AND response_id = $2), 2147483647)
     ORDER BY position`,
    [sessionId, responseId],
  );
  return rows.map((r) => r.item);
}

export async function listSessionItems(db: Db, projectId: string, sessionId: string, page: PageRequest): Promise<Page<Item>> {
  await requireSession(db, projectId, sessionId);
  const { rows } = await db.query<{ id: string; item: Item }>(
    `SELECT id, item FROM session_items WHERE session_id = $1
       AND position > COALESCE((SELECT position FROM session_items WHERE session_id = $1 AND id = $2), -1)
     ORDER BY position LIMIT $3`,
    [sessionId, page.after ?? null, fetchSize(page)],
  );
  return toPage(rows, page, (row) => row.item);
}
