// Socket Mode: Slack sends a bot's events to every connection the app opens, so
// one process in the cluster holds the bot's connection. A lease on the bot's
// row (not an advisory lock: it works through a transaction-mode pooler and on
// the embedded store) names the holder; it is renewed while the connection
// lives and taken over by another process once it expires.
import type { Db } from '../../store/db.js';

/** Takes or renews the lease; false when another live process holds it. */
export async function leaseSlackSocket(db: Db, botId: string, owner: string, ttlMs: number): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE slack_bots SET socket_owner = $2, socket_lease_until = now() + $3 * interval '1 millisecond'
     WHERE id = $1 AND mode = 'socket' AND (socket_owner IS NULL OR socket_owner = $2 OR socket_lease_until < now()) RETURNING 1`,
    [botId, owner, ttlMs],
  );
  return rows.length > 0;
}

export async function releaseSlackSocket(db: Db, botId: string, owner: string): Promise<void> {
  await db.query('UPDATE slack_bots SET socket_owner = NULL, socket_lease_until = NULL WHERE id = $1 AND socket_owner = $2', [botId, owner]);
}

/** The ids of every bot in Socket Mode, across projects: for the processes that connect them. */
export async function socketSlackBots(db: Db): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>("SELECT id FROM slack_bots WHERE mode = 'socket' ORDER BY id");
  return rows.map((r) => r.id);
}
