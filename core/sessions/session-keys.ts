// External conversation keys: a producer's session_key on a queue job, a Slack
// thread. Their sources are declared by the wings that use them. Each
// (project, source, key) maps to one Palai session, created by the first
// response that names the key, in that response's own transaction: a rollback
// leaves neither the session nor the key behind.
import { SourceRegistry } from '../idempotency/source-registry.js';
import { newId } from '../ids.js';
import type { Queryable } from '../store/db.js';

/** Where a key comes from (`queue`, `slack`, …): each source has its own key space, declared once by its wing. */
export type SessionKeySource = string;

const sources = new SourceRegistry<true>('session key source', () => true);

/** Declares a source of session keys; answers with it, for the wing to use. */
export const declareSessionKeySource = (name: string): SessionKeySource => sources.declare(name, true);

/** Whether a wing declared `name`; and every declared name, for a message. */
export const isSessionKeySource = (name: string): boolean => sources.names().includes(name);
export const sessionKeySources = (): string[] => sources.names();

/**
 * The id of the session `key` maps to, creating it (for `agentId`) when the key
 * is new. Two transactions creating the same key at once: the second waits on
 * the first's row and then reads it, so both land in one session.
 */
export async function sessionForKey(tx: Queryable, projectId: string, source: SessionKeySource, key: string, agentId: string): Promise<string> {
  sources.require(source); // refuses a source nobody declared
  const existing = await tx.query<{ session_id: string }>('SELECT session_id FROM session_keys WHERE project_id = $1 AND source = $2 AND key = $3', [
    projectId,
    source,
    key,
  ]);
  if (existing.rows[0]) return existing.rows[0].session_id;
  const id = newId('ses');
  await tx.query('INSERT INTO sessions (id, project_id, agent_id, metadata) VALUES ($1, $2, $3, $4)', [id, projectId, agentId, '{}']);
  const { rows } = await tx.query<{ session_id: string }>(
    `INSERT INTO session_keys (project_id, source, key, session_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT (project_id, source, key) DO NOTHING RETURNING session_id`,
    [projectId, source, key, id],
  );
  if (rows[0]) return rows[0].session_id;
  // Another transaction took the key first: use its session, drop ours.
  await tx.query('DELETE FROM sessions WHERE id = $1', [id]);
  const winner = await tx.query<{ session_id: string }>('SELECT session_id FROM session_keys WHERE project_id = $1 AND source = $2 AND key = $3', [
    projectId,
    source,
    key,
  ]);
  return winner.rows[0].session_id;
}
