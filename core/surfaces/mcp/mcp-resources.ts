// The project's responses and sessions as MCP resources (see mcp-resources-port.ts).
// Ids are time-ordered after their prefix (core/ids.ts), so the part after the
// prefix orders both kinds together: newest first is that part descending.
import type { Queryable } from '../../store/db.js';
import { MAX_COMPLETION_VALUES, type McpResourceKind, type McpResourceRow, type McpResources } from './mcp-resources-port.js';

interface Row {
  kind: McpResourceKind;
  id: string;
  agent_name: string | null;
  status: string | null;
  created_at: string;
}

const TABLES: Record<McpResourceKind, string> = { response: 'responses', session: 'sessions' };

/** A LIKE pattern matching text that starts with `prefix`, whatever it holds. */
const startsWith = (prefix: string): string => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const row = (r: Row): McpResourceRow => ({ kind: r.kind, id: r.id, agentName: r.agent_name, status: r.status, createdAt: Number(r.created_at) });

const firstValues = (rows: { value: string }[]) => ({
  values: rows.slice(0, MAX_COMPLETION_VALUES).map((r) => r.value),
  hasMore: rows.length > MAX_COMPLETION_VALUES,
});

export function createMcpResources(db: Queryable): McpResources {
  return {
    async list(projectId, { after, limit }) {
      const { rows } = await db.query<Row>(
        `SELECT kind, id, agent_name, status, created_at FROM (
           SELECT 'response' AS kind, r.id, a.name AS agent_name, r.status, extract(epoch FROM r.created_at)::bigint::text AS created_at
             FROM responses r JOIN agents a ON a.id = r.agent_id WHERE r.project_id = $1
           UNION ALL
           SELECT 'session', s.id, a.name, NULL, extract(epoch FROM s.created_at)::bigint::text
             FROM sessions s LEFT JOIN agents a ON a.id = s.agent_id WHERE s.project_id = $1
         ) resources
         WHERE $2::text IS NULL OR (split_part(id, '_', 2), id) < (split_part($2, '_', 2), $2)
         ORDER BY split_part(id, '_', 2) DESC, id DESC
         LIMIT $3`,
        [projectId, after ?? null, limit + 1],
      );
      const page = rows.slice(0, limit).map(row);
      return { rows: page, next: rows.length > limit ? page[page.length - 1].id : null };
    },

    async completeIds(projectId, kind, prefix) {
      const { rows } = await db.query<{ value: string }>(
        `SELECT id AS value FROM ${TABLES[kind]} WHERE project_id = $1 AND id LIKE $2 ORDER BY id DESC LIMIT $3`,
        [projectId, startsWith(prefix), MAX_COMPLETION_VALUES + 1],
      );
      return firstValues(rows);
    },

    async completeAgentNames(projectId, prefix) {
      const { rows } = await db.query<{ value: string }>('SELECT name AS value FROM agents WHERE project_id = $1 AND name LIKE $2 ORDER BY name LIMIT $3', [
        projectId,
        startsWith(prefix),
        MAX_COMPLETION_VALUES + 1,
      ]);
      return firstValues(rows);
    },
  };
}
