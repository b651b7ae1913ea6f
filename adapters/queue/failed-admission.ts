// What a failed admission means for a message, on every broker. Palai's own
// outage (the store is down or busy, the process not ready or stopping) says
// nothing about the job: the same message is tried again, and the failure does
// not count. Any other failure is one attempt; at the consumer's max_attempts
// the message is dead-lettered with the reason, so it cannot stall its queue.
import { isTransientStoreError } from '../../core/api/index.js';
import { isPalaiError } from '../../core/errors/palai-error.js';

/** Admission attempts of one message before it is dead-lettered, unless the consumer says otherwise. */
export const DEFAULT_MAX_ATTEMPTS = 5;

const OUTAGE_SLUGS = new Set(['store-unavailable', 'store-busy', 'not-ready', 'shutting-down']);

/** Palai cannot admit anything right now: trying the same message later is the only right answer. */
export function isOwnOutage(error: unknown): boolean {
  if (isPalaiError(error)) return OUTAGE_SLUGS.has(error.slug);
  // A raw driver error that means "not now" (a lost connection, a serialization race).
  return isTransientStoreError(error);
}

/** The dead-letter reason of a message whose admission failed `attempts` times, the last with `error`. */
export function failedReason(error: unknown, attempts?: number): string {
  const reason = `admitting the job failed: ${error instanceof Error ? error.message : String(error)}`;
  return attempts === undefined ? reason : `${reason} (after ${attempts} attempts)`;
}
