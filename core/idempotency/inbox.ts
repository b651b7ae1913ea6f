// The inbox: replay-or-reserve for every inbound surface. A request seen before
// (same project, source and key, unexpired) is answered from its record; a new
// one runs its work, which reserves the key in its own transaction. Two copies
// racing both miss the record; the index lets one commit and the other, refused
// with DuplicateIdempotencyKey, replays the winner.
import { PalaiError } from '../errors/palai-error.js';
import type { Db } from '../store/db.js';
import { findRecord, fingerprint, type IdempotencyRecord } from './idempotency.js';
import { inboxKeyTerm } from './inbox-sources.js';
import { DuplicateIdempotencyKey, MAX_INBOX_KEY_LENGTH, type IdempotencyClaim, type Inbox, type InboxIdentity, type InboxRecord } from './inbox-port.js';

export interface InboxOptions {
  /** How long a key is remembered after its request (PALAI_IDEMPOTENCY_RETENTION_HOURS; default 24). */
  retentionHours: number;
}

/** The earlier record must be for the same request; anything else is a conflict. */
function assertSameRequest(record: IdempotencyRecord, identity: InboxIdentity): InboxRecord {
  if (record.fingerprint !== identity.fingerprint) {
    const term = inboxKeyTerm(identity.source);
    throw new PalaiError('idempotency-conflict', `${term} ${JSON.stringify(identity.key)} was already used with a different request (${record.operation}).`);
  }
  return { operation: record.operation, resourceId: record.resourceId, answer: record.answer };
}

export function createInbox(db: Db, options: InboxOptions): Inbox {
  if (!(options.retentionHours > 0)) throw new RangeError(`inbox retentionHours must be positive, got ${options.retentionHours}`);

  return {
    fingerprint,

    async once(identity, work, replay) {
      const { projectId, source, key } = identity;
      // An undeclared source is refused before anything is read under it.
      inboxKeyTerm(source);
      if (key.length === 0 || key.length > MAX_INBOX_KEY_LENGTH) {
        throw new RangeError(
          `an inbox key must be 1 to ${MAX_INBOX_KEY_LENGTH} characters; the ${source} surface passed one of ${key.length} (surfaces validate keys first)`,
        );
      }
      const earlier = await findRecord(db, projectId, source, key);
      if (earlier) return replay(assertSameRequest(earlier, identity));
      const claim: IdempotencyClaim = {
        source,
        key,
        operation: identity.operation,
        fingerprint: identity.fingerprint,
        retentionHours: identity.retentionHours ?? options.retentionHours,
      };
      try {
        return await work(claim);
      } catch (error) {
        if (!(error instanceof DuplicateIdempotencyKey && error.source === source && error.key === key)) throw error;
        // A concurrent duplicate committed first: answer as it did.
        const winner = await findRecord(db, projectId, source, key);
        if (!winner) throw error;
        return replay(assertSameRequest(winner, identity));
      }
    },
  };
}
