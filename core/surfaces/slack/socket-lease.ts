// Socket Mode: Slack sends a bot's events to every connection the app opens, so
// one process in the cluster holds the bot's connection: the holder of the
// bot's cluster lease (core/leases/), renewed while the connection lives and
// taken over by another process once it expires or is released.
import type { LeaseGrant, LeaseTenure } from '../../leases/lease-port.js';
import { releaseLease, renewLease, takeLease } from '../../leases/leases.js';
import type { Db } from '../../store/db.js';

/** The lease key of a bot's Socket Mode connection. */
export const socketLeaseKey = (botId: string): string => `slack.socket:${botId}`;

/** Renews `held` (this process's tenure) or, without one, takes the lease; null when another process holds it. */
export async function leaseSlackSocket(db: Db, botId: string, owner: string, ttlMs: number, held?: LeaseTenure | null): Promise<LeaseGrant | null> {
  const key = socketLeaseKey(botId);
  return held ? renewLease(db, { key, token: held.token }, ttlMs) : takeLease(db, key, owner, ttlMs);
}

export async function releaseSlackSocket(db: Db, botId: string, tenure: LeaseTenure): Promise<void> {
  await releaseLease(db, { key: socketLeaseKey(botId), token: tenure.token });
}

/** The ids of every bot in Socket Mode, across projects: for the processes that connect them. */
export async function socketSlackBots(db: Db): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>("SELECT id FROM slack_bots WHERE mode = 'socket' ORDER BY id");
  return rows.map((r) => r.id);
}
