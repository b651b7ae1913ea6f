// The outbox port: durable outbound deliveries (webhooks, A2A push, queue
// results, Slack posts). A delivery is written in the transaction of the event
// it announces, so it exists exactly when the event does, and is handed to its
// consumer at least once, with retries and backoff, until it is delivered or dead.
//
// Glossary
//   consumer      a surface that carries deliveries out ('webhook', 'a2a_push', ...)
//   target        the consumer's own id of where a delivery goes (a webhook endpoint id)
//   subscription  "announce these response statuses to this target"; the status
//                 writer turns each matching status change into one delivery
//   delivery      one payload for one target; its id is the same on every attempt,
//                 so a receiver can deduplicate on it
//   attempt       one call of the consumer's deliver(); a failed one is retried
//                 after a backoff, up to a maximum, then the delivery is dead
//
// Writing: subscriptions.ts (subscribe), announce.ts (the status writer's hook),
// deliveries.ts (enqueue a direct delivery, operators' list and redeliver).
// Carrying out: register an OutboxConsumer with the OutboxDispatcher (dispatcher.ts).
import type { ResponseStatus } from '../../generated/schemas.js';

/** Channel NOTIFYed at commit when deliveries become due; the payload is the consumer's name. */
export const OUTBOX_CHANNEL = 'palai_outbox';

/** The longest error message kept with a delivery; longer ones are cut. */
export const MAX_ERROR_LENGTH = 500;

export type DeliveryStatus = 'pending' | 'delivered' | 'dead';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'dead'];

export interface OutboxSubscriptionInput {
  projectId: string;
  consumer: string;
  target: string;
  /** The response statuses to announce; at least one. */
  statuses: ResponseStatus[];
  /** Only this response (an A2A push config for one task). Default: every response. */
  responseId?: string | null;
  /** Only responses of this agent. Default: every agent. */
  agentId?: string | null;
}

export interface OutboxSubscription {
  id: string;
  projectId: string;
  consumer: string;
  target: string;
  statuses: ResponseStatus[];
  responseId: string | null;
  agentId: string | null;
  createdAt: Date;
}

/** What a subscription's deliveries carry: the status change and the journal sequence that announced it. */
export interface StatusAnnouncement {
  response_id: string;
  sequence: number;
  status: ResponseStatus;
}

/** A direct delivery, written in the caller's transaction (a queue result). */
export interface DeliveryInput {
  projectId: string;
  consumer: string;
  target: string;
  responseId?: string | null;
  eventSequence?: number | null;
  payload: Record<string, unknown>;
}

/** One delivery as its consumer sees it, on one attempt. */
export interface OutboxDelivery {
  /** The same on every attempt: receivers deduplicate on it. */
  id: string;
  projectId: string;
  consumer: string;
  target: string;
  /** Set when a subscription wrote the delivery; its payload is then a StatusAnnouncement. */
  subscriptionId: string | null;
  responseId: string | null;
  /** The journal sequence of the announced event, when there is one. */
  eventSequence: number | null;
  payload: Record<string, unknown>;
  /** This attempt's number: 1 on the first. */
  attempts: number;
  createdAt: Date;
}

/**
 * How an attempt ended. `retry`: try again later (a consumer's `retryAfterMs`,
 * say from a 429's Retry-After, wins over the backoff). `dead`: it will never
 * succeed (the target is gone, the receiver refused the payload).
 * Errors are stored and shown to operators: they must never hold a secret.
 */
export type DeliveryResult = { kind: 'delivered' } | { kind: 'retry'; error: string; retryAfterMs?: number } | { kind: 'dead'; error: string };

/**
 * A surface that carries deliveries out. `deliver` makes one attempt; a throw
 * counts as `retry` with the error's message. It should give up well before
 * the dispatcher's lease runs out, and must stop when `signal` aborts (shutdown,
 * or the lease ran out): an attempt that outlives its lease may be made twice.
 */
export interface OutboxConsumer {
  /** The `consumer` of the deliveries it takes. */
  readonly name: string;
  /**
   * Attempts to one target running at once, counted over every dispatcher
   * sharing the store, so one slow target never holds up another's deliveries.
   * Default: no limit but the dispatcher's own concurrency.
   */
  readonly perTargetConcurrency?: number;
  deliver(delivery: OutboxDelivery, signal: AbortSignal): Promise<DeliveryResult>;
}

/** A delivery as operators see it: where it is in its life. */
export interface DeliveryRecord extends OutboxDelivery {
  status: DeliveryStatus;
  nextAttemptAt: Date;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  /** The latest failed attempt's error, kept after a later success. */
  lastError: string | null;
  deliveredAt: Date | null;
  deadAt: Date | null;
}

/** An error message fit to store: a string, cut to MAX_ERROR_LENGTH characters. */
export function storedError(error: unknown): string {
  const message = error instanceof Error ? error.message || error.name : String(error);
  const chars = [...message];
  return chars.length > MAX_ERROR_LENGTH ? chars.slice(0, MAX_ERROR_LENGTH - 1).join('') + '…' : message;
}
