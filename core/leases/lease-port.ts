// The lease port: one holder per key across the cluster, for work only one
// process may do at a time (a Slack bot's Socket Mode connection, a companion
// node's live connection). A lease is a row in the store, not an advisory lock,
// so it works through a transaction-mode pooler and on the embedded store, and
// its expiry is read by the store's clock: a process whose clock steps can
// neither steal a lease nor keep one.
//
// Glossary
//   key       what is leased: `<wing>.<what>:<id>`, e.g. `slack.socket:slk_…`
//   holder    who holds it: a name unique to one process (host, pid, a random part)
//   tenure    one holder's time with a key, from a take to its end (expiry,
//             release, another holder's take)
//   token     the fencing token of a tenure: every take of a key returns a
//             greater one than every earlier take of it
//   fencing   a write done for a tenure checks, in its own transaction, that
//             the tenure's token is still current; a holder that lost the key
//             (a pause, a partition) cannot write behind the new holder's back
//
// Duties
//   - Take, then renew well before `expiresAt` (a third of the time to live is
//     usual); stop the work as soon as a renew answers null, or once the lease
//     would have expired without a renew that answered (the store out of reach).
//   - Release on a graceful stop, so another process takes over at once.
//   - A write that must not happen after the key moved on goes through a kernel
//     command that checks the token in its transaction (leases.ts: holdsLease).
//
// Reading order: this file, then leases.ts (the statements).

/** The longest key, and the longest holder name. */
export const MAX_LEASE_KEY_LENGTH = 200;
export const MAX_LEASE_HOLDER_LENGTH = 200;
/** What a key may hold: letters, digits and `. _ : / -`, starting with a letter or digit. */
export const LEASE_KEY_SYNTAX = /^[A-Za-z0-9][A-Za-z0-9._:/-]*$/;
/** The longest time to live of one take or renew: a day. */
export const MAX_LEASE_TTL_MS = 24 * 60 * 60 * 1000;

/** One tenure, as a take or a renew answered it. */
export interface LeaseGrant {
  key: string;
  holder: string;
  /** The tenure's fencing token; pass it to renew, release and fenced writes. */
  token: number;
  /** When the lease runs out unless renewed, by the store's clock. */
  expiresAt: Date;
}

/** What renew and release need: the key and the tenure's token. */
export type LeaseTenure = Pick<LeaseGrant, 'key' | 'token'>;

export interface Leases {
  /**
   * Takes the key for `holder` for `ttlMs`: when nobody holds it, its lease
   * expired or was released, or `holder` itself holds it (a new tenure then
   * begins, and the old token is no longer current). Null when another holder's
   * lease is live.
   */
  take(key: string, holder: string, ttlMs: number): Promise<LeaseGrant | null>;
  /**
   * Extends the tenure to `ttlMs` from now. Null once another holder took the
   * key or the tenure was released. A lease that expired but nobody took is
   * renewed (its fenced writes were refused meanwhile).
   */
  renew(tenure: LeaseTenure, ttlMs: number): Promise<LeaseGrant | null>;
  /** Ends the tenure at once; false when it was no longer current (nothing changed). */
  release(tenure: LeaseTenure): Promise<boolean>;
}
