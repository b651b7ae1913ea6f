// A response's journal sequences are taken from its row: `next_sequence` is the
// next one free, and a worker takes any only while its fencing token is the
// response's. The journal's append (journal/journal.ts) runs this in its own
// statement, so taking sequences and writing the events cost one round trip.

/**
 * The UPDATE that takes `count` sequences for the response, as SQL over the
 * caller's placeholders: it returns the first as `first` (and the agent, for
 * what announces the events), or no row when the lease token is stale (an API
 * writer's token is null and holds no lease).
 */
export const takeSequences = (responseId: string, leaseToken: string, count: string): string =>
  `UPDATE responses SET next_sequence = next_sequence + ${count}
       WHERE id = ${responseId} AND (${leaseToken} IS NULL OR lease_token = ${leaseToken})
       RETURNING next_sequence - ${count} AS first, agent_id`;
