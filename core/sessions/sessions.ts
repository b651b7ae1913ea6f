// Sessions are durable conversations: an ordered list of items that every
// response in the session reads before its own input. A session belongs to one
// agent; one created without (a conversation) is bound by its first response.
// Items may also be added and removed directly, between responses.
import type { FunctionCallOutputItem, InputItem, Item, Metadata, Session } from '../../generated/schemas.js';
import { requireAgent } from '../agents/agents.js';
import { notFound, PalaiError } from '../errors/palai-error.js';
import { newId } from '../ids.js';
import { unixSeconds } from '../json.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../pagination.js';
import type { Db, Queryable } from '../store/db.js';
import { recordAnswer, reserveKey, type IdempotencyClaim } from '../idempotency/idempotency.js';
import { normalizeInput } from '../responses/items.js';

interface SessionRow {
  id: string;
  agent_id: string | null;
  agent_name: string | null;
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
     FROM sessions s LEFT JOIN agents a ON a.id = s.agent_id WHERE s.project_id = $1 AND s.id = $2${forUpdate ? ' FOR UPDATE OF s' : ''}`,
    [projectId, sessionId],
  );
  return rows[0] ?? null;
}

export async function requireSession(db: Queryable, projectId: string, sessionId: string, forUpdate = false): Promise<Session> {
  const row = await findSession(db, projectId, sessionId, forUpdate);
  if (!row) throw notFound('session', sessionId);
  return sessionView(row);
}

export interface NewSession {
  /** The agent's id or name; left out, the first response binds it. */
  agent?: string;
  metadata?: Metadata;
  /** Items the conversation starts with. */
  items?: InputItem[];
}

export async function createSession(db: Db, projectId: string, request: NewSession, idem?: IdempotencyClaim): Promise<Session> {
  return db.transaction(async (tx) => {
    const id = newId('ses');
    await reserveKey(tx, projectId, idem, id);
    const agent = request.agent === undefined ? null : await requireAgent(tx, projectId, request.agent);
    await insertSession(tx, projectId, id, agent?.id ?? null, request.metadata);
    if (request.items) await appendSessionItems(tx, projectId, id, null, normalizeInput(request.items));
    return requireSession(tx, projectId, id);
  });
}

/** A new, empty session (`agentId` null: bound by its first response), in the caller's transaction. */
export async function insertSession(tx: Queryable, projectId: string, id: string, agentId: string | null, metadata: Metadata = {}): Promise<void> {
  await tx.query('INSERT INTO sessions (id, project_id, agent_id, metadata) VALUES ($1, $2, $3, $4)', [id, projectId, agentId, JSON.stringify(metadata)]);
}

export async function deleteSession(db: Db, projectId: string, sessionId: string): Promise<void> {
  const { rowCount } = await db.query('DELETE FROM sessions WHERE project_id = $1 AND id = $2', [projectId, sessionId]);
  if (rowCount === 0) throw notFound('session', sessionId);
}

/** Binds a session created without an agent to the agent of its first response (in that response's admission). */
export async function bindSessionAgent(tx: Queryable, sessionId: string, agentId: string): Promise<void> {
  await tx.query('UPDATE sessions SET agent_id = $2 WHERE id = $1 AND agent_id IS NULL', [sessionId, agentId]);
}

export async function updateSessionMetadata(db: Db, projectId: string, sessionId: string, metadata: Metadata, idem?: IdempotencyClaim): Promise<Session> {
  return db.transaction(async (tx) => {
    await reserveKey(tx, projectId, idem, sessionId);
    const { rowCount } = await tx.query('UPDATE sessions SET metadata = $3 WHERE project_id = $1 AND id = $2', [
      projectId,
      sessionId,
      JSON.stringify(metadata),
    ]);
    if (rowCount === 0) throw notFound('session', sessionId);
    return requireSession(tx, projectId, sessionId);
  });
}

/**
 * Adds items at the end of the session, outside any response; they are the
 * conversation's from now on. The page of added items is the answer a repeat
 * with the same idempotency key gets.
 */
export async function addSessionItems(db: Db, projectId: string, sessionId: string, input: InputItem[], idem?: IdempotencyClaim): Promise<Page<Item>> {
  return db.transaction(async (tx) => {
    await reserveKey(tx, projectId, idem, sessionId);
    await requireSession(tx, projectId, sessionId, true);
    const items = normalizeInput(input);
    await appendSessionItems(tx, projectId, sessionId, null, items);
    const page = toPage(items, { limit: items.length }, (item) => item);
    await recordAnswer(tx, projectId, idem, 200, page, sessionId);
    return page;
  });
}

export async function requireSessionItem(db: Queryable, projectId: string, sessionId: string, itemId: string): Promise<Item> {
  await requireSession(db, projectId, sessionId);
  const { rows } = await db.query<{ item: Item }>('SELECT item FROM session_items WHERE session_id = $1 AND id = $2', [sessionId, itemId]);
  if (!rows[0]) throw notFound('item', itemId);
  return rows[0].item;
}

/** Removes one item: later responses of the session no longer see it. */
export async function deleteSessionItem(db: Db, projectId: string, sessionId: string, itemId: string): Promise<void> {
  await requireSession(db, projectId, sessionId);
  const { rowCount } = await db.query('DELETE FROM session_items WHERE session_id = $1 AND id = $2', [sessionId, itemId]);
  if (rowCount === 0) throw notFound('item', itemId);
}

/** Appends items at the end of the session, in order. Call inside the transaction that produced them (`responseId` null: added directly). */
export async function appendSessionItems(tx: Queryable, projectId: string, sessionId: string, responseId: string | null, items: Item[]): Promise<void> {
  if (items.length === 0) return;
  await tx.query(
    `WITH items AS (SELECT e.item, e.ord AS n FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS e(item, ord)),
     ${sessionAppendCtes('items', { projectId: '$2', sessionId: '$1', responseId: '$3::text' })}
     SELECT 1`,
    [sessionId, projectId, responseId, JSON.stringify(items)],
  );
}

/**
 * The same as CTEs, for a statement that writes more: `items` names a relation
 * of `item` (jsonb) and `n` (its place, from 1), and the targets are SQL over
 * `from`. One statement however many items: the positions follow the session's
 * count in order; a session deleted while its response ran has no row to
 * update, so its items go with it.
 */
export function sessionAppendCtes(items: string, target: { projectId: string; sessionId: string; responseId: string; from?: string }): string {
  const from = target.from ? `${target.from}, ` : '';
  return `counted AS (SELECT count(*)::integer AS n FROM ${items}),
     session AS (
       UPDATE sessions s SET item_count = s.item_count + counted.n FROM ${from}counted
        WHERE s.id = ${target.sessionId} AND counted.n > 0
        RETURNING s.item_count - counted.n AS base),
     session_added AS (
       INSERT INTO session_items (id, project_id, session_id, position, response_id, item)
       SELECT i.item->>'id', ${target.projectId}, ${target.sessionId}, session.base + i.n - 1, ${target.responseId}, i.item FROM ${from}session, ${items} i)`;
}

/** Function call outputs for these calls that were added to the session directly (outside any response), oldest first. */
export async function looseCallOutputs(db: Queryable, sessionId: string, callIds: string[]): Promise<{ id: string; item: FunctionCallOutputItem }[]> {
  const { rows } = await db.query<{ id: string; item: FunctionCallOutputItem }>(
    `SELECT id, item FROM session_items WHERE session_id = $1 AND response_id IS NULL
       AND item->>'type' = 'function_call_output' AND item->>'call_id' = ANY($2::text[]) ORDER BY position`,
    [sessionId, callIds],
  );
  return rows;
}

/** Takes items out of the session, in the caller's transaction (they move into a response, which the session gets when it ends). */
export async function removeSessionItems(tx: Queryable, sessionId: string, itemIds: string[]): Promise<void> {
  if (itemIds.length > 0) await tx.query('DELETE FROM session_items WHERE session_id = $1 AND id = ANY($2::text[])', [sessionId, itemIds]);
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

/** The session's items, oldest first (or newest first with `order: 'desc'`), after the item `after`. */
export async function listSessionItems(db: Db, projectId: string, sessionId: string, page: PageRequest & { order?: 'asc' | 'desc' }): Promise<Page<Item>> {
  await requireSession(db, projectId, sessionId);
  const descending = page.order === 'desc';
  if (page.after !== undefined) {
    const { rowCount } = await db.query('SELECT 1 FROM session_items WHERE session_id = $1 AND id = $2', [sessionId, page.after]);
    if (rowCount === 0) {
      throw new PalaiError('validation-failed', `after ${JSON.stringify(page.after)} is not an item of this session.`, {
        errors: [{ pointer: '/query/after', detail: 'is not the id of one of its items' }],
      });
    }
  }
  const { rows } = await db.query<{ id: string; item: Item }>(
    `SELECT id, item FROM session_items WHERE session_id = $1
       AND ($2::text IS NULL OR position ${descending ? '<' : '>'} (SELECT position FROM session_items WHERE session_id = $1 AND id = $2))
     ORDER BY position ${descending ? 'DESC' : 'ASC'} LIMIT $3`,
    [sessionId, page.after ?? null, fetchSize(page)],
  );
  return toPage(rows, page, (row) => row.item);
}
