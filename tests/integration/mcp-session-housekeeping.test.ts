// Housekeeping of MCP sessions: sessions that ended or sat idle past their
// limit more than a day ago are deleted with their call records; live ones and
// those that ended recently (a host may still be told "session gone") stay.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProject } from '../../core/auth/projects.js';
import { MCP_SESSION_IDLE_HOURS, purgeStaleMcpSessions } from '../../core/surfaces/mcp/mcp-sessions.js';
import type { Db } from '../../core/store/db.js';
import { migrate } from '../../core/store/migrate.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';

for (const kind of storeKinds) {
  const unavailable = kind === 'postgres' ? await postgresUnavailable() : null;
  describe(`MCP session housekeeping [${kind}]`, { skip: unavailable ?? false }, () => {
    let database: TestDatabase;
    let db: Db;
    before(async () => {
      database = await openTestDatabase(kind);
      db = database.db;
      await migrate(db);
    });
    after(() => database.drop());

    test('ended and long-idle sessions go, with their calls; live and recently ended ones stay', async () => {
      const projectId = (await createProject(db, 'mcp-housekeeping')).id;
      const session = async (id: string, lastUsedHoursAgo: number, endedHoursAgo: number | null) => {
        await db.query(
          `INSERT INTO mcp_sessions (id, project_id, key_id, protocol_version, client_info, client_capabilities, created_at, last_used_at, ended_at)
           VALUES ($1, $2, 'key_x', '2025-11-25', '{}', '{}', now() - make_interval(hours => $3), now() - make_interval(hours => $3),
                   CASE WHEN $4::integer IS NULL THEN NULL ELSE now() - make_interval(hours => $4::integer) END)`,
          [id, projectId, lastUsedHoursAgo, endedHoursAgo],
        );
        await db.query(`INSERT INTO mcp_session_calls (session_id, request_key, response_id) VALUES ($1, 'r1', 'resp_x')`, [id]);
      };
      await session('live', 0, null);
      await session('idle-recently', MCP_SESSION_IDLE_HOURS + 2, null);
      await session('idle-long-ago', MCP_SESSION_IDLE_HOURS + 30, null);
      await session('ended-recently', 5, 2);
      await session('ended-long-ago', 60, 50);
      assert.equal(await purgeStaleMcpSessions(db), 2);
      const { rows } = await db.query<{ id: string }>('SELECT id FROM mcp_sessions ORDER BY id');
      assert.deepEqual(
        rows.map((r) => r.id),
        ['ended-recently', 'idle-recently', 'live'],
      );
      const calls = await db.query<{ session_id: string }>('SELECT session_id FROM mcp_session_calls ORDER BY session_id');
      assert.deepEqual(
        calls.rows.map((r) => r.session_id),
        ['ended-recently', 'idle-recently', 'live'],
      );
    });
  });
}
