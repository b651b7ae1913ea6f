// The inbox port: inbound deduplication for every surface. A request carries an
// identity (project, source, the source's own key for it, and a fingerprint of
// what it asks); the inbox runs its work at most once per identity and answers a
// repeat from what the first one left. Surfaces validate their keys' syntax and
// shape their answers; the inbox owns "have we seen this, and was it the same?".
import type { PalaiError } from '../errors/palai-error.js';

/**
 * Where an inbound request came from: each source has its own key space. A
 * source is declared once by its wing, with the name its users know the key by
 * (`declareInboxSource` in inbox-sources.ts: `http`, `a2a`, `mcp`, `queue`,
 * `slack`, and whatever a new surface declares); the inbox refuses any other.
 */
export type InboxSource = string;

/** The longest key any source may use (the column holds more; this keeps keys reasonable). */
export const MAX_INBOX_KEY_LENGTH = 255;

export interface InboxIdentity {
  projectId: string;
  source: InboxSource;
  /** The source's key for this request: 1 to 255 characters, checked for syntax by the surface. */
  key: string;
  /** What the request does (an operation id); named in a conflict's message. */
  operation: string;
  /** From `Inbox.fingerprint`: equal for the same request, different otherwise. */
  fingerprint: string;
  /** How long the key is remembered, when the source may repeat a request for longer than the default (a queue's redeliveries). */
  retentionHours?: number;
}

/** What an earlier request with the same identity left behind. */
export interface InboxRecord {
  operation: string;
  /** The resource the earlier request created or acted on; null if it named none. */
  resourceId: string | null;
  /** Its answer, for operations whose answer is not re-derived from the resource. */
  answer: { status: number; body: unknown } | null;
}

/**
 * What the work passes to the core operation, which reserves it inside the
 * transaction that does the work, so the work and the key commit together.
 */
export interface IdempotencyClaim {
  source: InboxSource;
  key: string;
  /** Hash of the operation, its parameters and its body. */
  fingerprint: string;
  operation: string;
  retentionHours: number;
}

/** Thrown inside the transaction when the key is already taken; the transaction rolls back. */
export class DuplicateIdempotencyKey extends Error {
  constructor(
    readonly source: InboxSource,
    readonly key: string,
  ) {
    super(`${source} idempotency key ${key} is already in use`);
    this.name = 'DuplicateIdempotencyKey';
  }
}

export interface Inbox {
  /** A stable hash of the request: its operation, parameters and body (key order does not matter). */
  fingerprint(operation: string, params: Record<string, string>, body: unknown): string;
  /**
   * Runs `work` once per identity. A repeat of a finished request, or of one
   * that commits while this one waits, is answered by `replay` with what the
   * first left; the same key with a different fingerprint throws an
   * `idempotency-conflict` {@link PalaiError} naming the source's key term. An
   * expired record counts as never seen. `work` must hand its claim to a core
   * operation that reserves it; an undeclared source, an empty key or one over
   * 255 characters is a programming error (RangeError), not a request to refuse.
   */
  once<T>(identity: InboxIdentity, work: (claim: IdempotencyClaim) => Promise<T>, replay: (record: InboxRecord) => Promise<T>): Promise<T>;
}
