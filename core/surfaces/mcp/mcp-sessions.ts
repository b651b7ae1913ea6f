// MCP sessions in the store (see mcp-sessions-port.ts). One statement per
// operation: a request checks its session and marks it used in one round trip.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../store/db.js';
import {
  MAX_SUBSCRIPTIONS_PER_SESSION,
  type McpLogLevel,
  type McpSession,
  type McpSessionCall,
  type McpSessions,
  type NewMcpSession,
} from './mcp-sessions-port.js';

/** A session nobody used for this long is gone (its host re-initializes). Default 24 hours. */
export const MCP_SESSION_IDLE_HOURS = 24;

interface SessionRow {
  id: string;
  project_id: string;
  key_id: string;
  protocol_version: string;
  client_info: Record<string, unknown>;
  client_capabilities: Record<string, unknown>;
  log_level: McpLogLevel | null;
}

interface CallRow {
  session_id: string;
  request_key: string;
  response_id: string;
  progress_token: string | number | null;
  task: boolean;
}

const session = (row: SessionRow): McpSession => ({
  id: row.id,
  projectId: row.project_id,
  keyId: row.key_id,
  protocolVersion: row.protocol_version,
  clientInfo: row.client_info,
  clientCapabilities: row.client_capabilities,
  logLevel: row.log_level,
});

const call = (row: CallRow): McpSessionCall => ({
  sessionId: row.session_id,
  requestKey: row.request_key,
  responseId: row.response_id,
  progressToken: row.progress_token,
  task: row.task,
});

/** The session is live: not ended, used within MCP_SESSION_IDLE_HOURS (the hours are the last parameter). */
const LIVE = (alias: string, hoursParam: string) => `${alias}.ended_at IS NULL AND ${alias}.last_used_at > now() - make_interval(hours => ${hoursParam})`;

/** 192 random bits: the session id travels in a header and must not be guessable. */
const newSessionId = (): string => `mcps_${randomBytes(24).toString('base64url')}`;

export function createMcpSessions(db: Queryable): McpSessions {
  const callByRequest = async (sessionId: string, requestKey: string): Promise<McpSessionCall | null> => {
    const { rows } = await db.query<CallRow>('SELECT * FROM mcp_session_calls WHERE session_id = $1 AND request_key = $2', [sessionId, requestKey]);
    return rows[0] ? call(rows[0]) : null;
  };
  return {
    async open(input: NewMcpSession) {
      const { rows } = await db.query<SessionRow>(
        `INSERT INTO mcp_sessions (id, project_id, key_id, protocol_version, client_info, client_capabilities)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
        [newSessionId(), input.projectId, input.keyId, input.protocolVersion, JSON.stringify(input.clientInfo), JSON.stringify(input.clientCapabilities)],
      );
      return session(rows[0]);
    },

    async use(projectId, sessionId) {
      // Marks use at most once a minute, so a busy session does not write on every request.
      const { rows } = await db.query<SessionRow>(
        `WITH live AS (
           SELECT * FROM mcp_sessions
            WHERE id = $1 AND project_id = $2 AND ${LIVE('mcp_sessions', '$3')}
         ), touched AS (
           UPDATE mcp_sessions SET last_used_at = now()
            WHERE id IN (SELECT id FROM live WHERE last_used_at < now() - interval '1 minute')
         )
         SELECT * FROM live`,
        [sessionId, projectId, MCP_SESSION_IDLE_HOURS],
      );
      return rows[0] ? session(rows[0]) : null;
    },

    async end(projectId, sessionId) {
      const { rows } = await db.query<{ ended: boolean }>(
        `WITH ended AS (
           UPDATE mcp_sessions SET ended_at = now() WHERE id = $1 AND project_id = $2 AND ended_at IS NULL RETURNING id
         ), dropped AS (
           DELETE FROM mcp_session_subscriptions WHERE session_id IN (SELECT id FROM ended)
         )
         SELECT EXISTS (SELECT 1 FROM ended) AS ended`,
        [sessionId, projectId],
      );
      return rows[0].ended;
    },

    async setLogLevel(sessionId, level) {
      await db.query('UPDATE mcp_sessions SET log_level = $2 WHERE id = $1', [sessionId, level]);
    },

    async subscribe(sessionId, uri) {
      // One statement: the count and the insert see the same rows, so the bound holds for one session's requests in turn.
      const { rows } = await db.query<{ kept: boolean }>(
        `WITH existing AS (
           SELECT count(*) AS n, bool_or(uri = $2) AS has FROM mcp_session_subscriptions WHERE session_id = $1
         ), inserted AS (
           INSERT INTO mcp_session_subscriptions (session_id, uri)
           SELECT $1, $2 FROM existing WHERE NOT coalesce(existing.has, false) AND existing.n < $3
           ON CONFLICT DO NOTHING RETURNING uri
         )
         SELECT coalesce(has, false) OR n < $3 AS kept FROM existing`,
        [sessionId, uri, MAX_SUBSCRIPTIONS_PER_SESSION],
      );
      return rows[0].kept;
    },

    async unsubscribe(sessionId, uri) {
      const { rowCount } = await db.query('DELETE FROM mcp_session_subscriptions WHERE session_id = $1 AND uri = $2', [sessionId, uri]);
      return rowCount > 0;
    },

    async subscriptions(projectId, sessionId) {
      const { rows } = await db.query<{ uri: string | null }>(
        `SELECT sub.uri FROM mcp_sessions s LEFT JOIN mcp_session_subscriptions sub ON sub.session_id = s.id
          WHERE s.id = $1 AND s.project_id = $2 AND ${LIVE('s', '$3')}`,
        [sessionId, projectId, MCP_SESSION_IDLE_HOURS],
      );
      return rows.length === 0 ? null : rows.flatMap((row) => (row.uri === null ? [] : [row.uri]));
    },

    async recordCall(input) {
      const { rows } = await db.query<CallRow>(
        `WITH inserted AS (
           INSERT INTO mcp_session_calls (session_id, request_key, response_id, progress_token, task)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (session_id, request_key) DO NOTHING RETURNING *
         )
         SELECT * FROM inserted
         UNION ALL
         SELECT * FROM mcp_session_calls WHERE session_id = $1 AND request_key = $2 AND NOT EXISTS (SELECT 1 FROM inserted)`,
        [input.sessionId, input.requestKey, input.responseId, input.progressToken === null ? null : JSON.stringify(input.progressToken), input.task],
      );
      // A concurrent insert that committed after this statement's snapshot: read it now.
      if (rows[0]) return call(rows[0]);
      const existing = await callByRequest(input.sessionId, input.requestKey);
      if (!existing) throw new Error(`mcp session call ${input.sessionId}/${input.requestKey} vanished while being recorded`);
      return existing;
    },

    callByRequest,

    async callByResponse(sessionId, responseId) {
      const { rows } = await db.query<CallRow>('SELECT * FROM mcp_session_calls WHERE session_id = $1 AND response_id = $2 LIMIT 1', [sessionId, responseId]);
      return rows[0] ? call(rows[0]) : null;
    },

    purgeStale: () => purgeStaleMcpSessions(db),
  };
}

/**
 * Deletes sessions that ended, or sat idle past MCP_SESSION_IDLE_HOURS, more
 * than a day ago (a host sees them as gone already), with their call records.
 */
export async function purgeStaleMcpSessions(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM mcp_sessions
     WHERE coalesce(ended_at, last_used_at + make_interval(hours => $1)) < now() - interval '1 day'`,
    [MCP_SESSION_IDLE_HOURS],
  );
  return rowCount;
}
