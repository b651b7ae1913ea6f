// Cluster leases (see lease-port.ts): one statement each, every time read from
// the store's clock. A take bumps the key's token under the row lock, so two
// takes of one key are ordered and the later one gets the greater token; a
// fenced write locks the row (FOR SHARE) while it checks its token, so a take
// waits for that write's transaction and the new tenure begins after it.
import { PalaiError } from '../errors/palai-error.js';
import type { Db, Queryable } from '../store/db.js';
import {
  LEASE_KEY_SYNTAX,
  MAX_LEASE_HOLDER_LENGTH,
  MAX_LEASE_KEY_LENGTH,
  MAX_LEASE_TTL_MS,
  type LeaseGrant,
  type Leases,
  type LeaseTenure,
} from './lease-port.js';

interface LeaseRow {
  key: string;
  holder: string;
  token: number;
  expires_at: Date;
}

const RETURNING = 'RETURNING key, holder, token, expires_at';

const grantOf = (row: LeaseRow | undefined): LeaseGrant | null =>
  row ? { key: row.key, holder: row.holder, token: row.token, expiresAt: new Date(row.expires_at) } : null;

function invalid(detail: string, pointer: string): PalaiError {
  return new PalaiError('validation-failed', detail, { errors: [{ pointer, detail }] });
}

function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_LEASE_KEY_LENGTH || !LEASE_KEY_SYNTAX.test(key)) {
    throw invalid(
      `A lease key is 1 to ${MAX_LEASE_KEY_LENGTH} letters, digits and ". _ : / -", starting with a letter or digit; got ${JSON.stringify(key)}.`,
      '/key',
    );
  }
  return key;
}

function checkTtl(ttlMs: unknown): number {
  if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_LEASE_TTL_MS) {
    throw invalid(`A lease's time to live is a whole number of milliseconds from 1 to ${MAX_LEASE_TTL_MS}; got ${String(ttlMs)}.`, '/ttl_ms');
  }
  return ttlMs;
}

function checkTenure(tenure: LeaseTenure): LeaseTenure {
  checkKey(tenure?.key);
  if (!Number.isInteger(tenure.token) || tenure.token < 1) throw invalid(`A lease token is a positive whole number; got ${String(tenure.token)}.`, '/token');
  return tenure;
}

/** Takes the key when it is free, expired, released or `holder`'s own; null when another holder's lease is live. */
export async function takeLease(q: Queryable, key: string, holder: string, ttlMs: number): Promise<LeaseGrant | null> {
  checkKey(key);
  if (typeof holder !== 'string' || holder.length === 0 || holder.length > MAX_LEASE_HOLDER_LENGTH) {
    throw invalid(`A lease holder is named in 1 to ${MAX_LEASE_HOLDER_LENGTH} characters.`, '/holder');
  }
  const { rows } = await q.query<LeaseRow>(
    `INSERT INTO cluster_leases AS l (key, holder, token, expires_at) VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond')
     ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, token = l.token + 1, expires_at = EXCLUDED.expires_at, taken_at = now()
     WHERE l.holder IS NULL OR l.holder = EXCLUDED.holder OR l.expires_at <= now()
     ${RETURNING}`,
    [key, holder, checkTtl(ttlMs)],
  );
  return grantOf(rows[0]);
}

/** Extends a tenure that is still the key's latest and not released; null otherwise. */
export async function renewLease(q: Queryable, tenure: LeaseTenure, ttlMs: number): Promise<LeaseGrant | null> {
  checkTenure(tenure);
  const { rows } = await q.query<LeaseRow>(
    `UPDATE cluster_leases SET expires_at = now() + $3 * interval '1 millisecond' WHERE key = $1 AND token = $2 AND holder IS NOT NULL ${RETURNING}`,
    [tenure.key, tenure.token, checkTtl(ttlMs)],
  );
  return grantOf(rows[0]);
}

/** Ends a current tenure; false when it was not current. The row stays, keeping the key's token count. */
export async function releaseLease(q: Queryable, tenure: LeaseTenure): Promise<boolean> {
  checkTenure(tenure);
  const { rowCount } = await q.query('UPDATE cluster_leases SET holder = NULL, expires_at = now() WHERE key = $1 AND token = $2 AND holder IS NOT NULL', [
    tenure.key,
    tenure.token,
  ]);
  return rowCount > 0;
}

/**
 * Inside the caller's transaction: whether the tenure is current and live now.
 * The row stays share-locked to the end of the transaction, so no take can
 * begin a new tenure before the writes that follow this check commit.
 */
export async function holdsLease(tx: Queryable, tenure: LeaseTenure): Promise<boolean> {
  checkTenure(tenure);
  const { rows } = await tx.query('SELECT 1 FROM cluster_leases WHERE key = $1 AND token = $2 AND holder IS NOT NULL AND expires_at > now() FOR SHARE', [
    tenure.key,
    tenure.token,
  ]);
  return rows.length > 0;
}

/** The Leases port over one store. */
export function createLeases(db: Db): Leases {
  return {
    take: (key, holder, ttlMs) => takeLease(db, key, holder, ttlMs),
    renew: (tenure, ttlMs) => renewLease(db, tenure, ttlMs),
    release: (tenure) => releaseLease(db, tenure),
  };
}
