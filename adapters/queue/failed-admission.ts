// What a failed admission means for a message, on every broker. Palai's own
// outage (`isOutage`: the store is down or busy, the process not ready or
// stopping) says nothing about the job: the same message is tried again, and
// the failure does not count. Any other failure is one attempt; at the
// consumer's max_attempts the message is dead-lettered with the reason, so it
// cannot stall its queue.

/** Admission attempts of one message before it is dead-lettered, unless the consumer says otherwise. */
export const DEFAULT_MAX_ATTEMPTS = 5;

/** The dead-letter reason of a message whose admission failed `attempts` times, the last with `error`. */
export function failedReason(error: unknown, attempts?: number): string {
  const reason = `admitting the job failed: ${error instanceof Error ? error.message : String(error)}`;
  return attempts === undefined ? reason : `${reason} (after ${attempts} attempts)`;
}
