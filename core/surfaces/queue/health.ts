// A queue consumer's health: whether the processes running it reach its source.
// Each process reports when its own state changes (queue_consumer_health, one
// row per consumer); the report names the consumer's version it ran, so a
// runner of a version since replaced cannot overwrite what its successor says.
import type { QueueConsumerHealth } from '../../../generated/schemas.js';
import { storableText, unixSeconds } from '../../json.js';
import type { Queryable } from '../../store/db.js';
import type { QueueConsumerConfig, QueueHealthReport } from './queue-port.js';

const MAX_ERROR_CHARS = 1000;

/** The health columns a consumer view reads, joined only when they speak of the consumer's current version. */
export const HEALTH_COLUMNS = 'h.state AS health_state, h.since AS health_since, h.last_error AS health_last_error, h.last_error_at AS health_last_error_at';
export const HEALTH_JOIN = 'LEFT JOIN queue_consumer_health h ON h.consumer_id = c.id AND h.consumer_version = c.updated_at';

export interface HealthColumns {
  health_state?: 'running' | 'failing' | null;
  health_since?: Date | null;
  health_last_error?: string | null;
  health_last_error_at?: Date | null;
}

export function healthView(row: HealthColumns & { paused: boolean; updated_at: Date }): QueueConsumerHealth {
  const lastError = { last_error: row.health_last_error ?? null, last_error_at: unixSeconds(row.health_last_error_at ?? null) };
  if (row.paused) return { state: 'paused', since: unixSeconds(row.updated_at)!, ...lastError };
  if (!row.health_state) return { state: 'starting', since: unixSeconds(row.updated_at)!, last_error: null, last_error_at: null };
  return { state: row.health_state, since: unixSeconds(row.health_since!)!, ...lastError };
}

/**
 * Records what one process found: `since` moves only when the state changes,
 * and a `running` report keeps the last error of the same version. A report
 * about an older version than the consumer's (a runner stopping after a
 * change) is dropped; `updatedAt` is the process's copy, to the millisecond.
 */
export async function reportHealth(db: Queryable, consumer: Pick<QueueConsumerConfig, 'id' | 'updatedAt'>, report: QueueHealthReport): Promise<void> {
  const error = report.state === 'failing' ? storableText([...report.error].slice(0, MAX_ERROR_CHARS).join('')) : null;
  await db.query(
    `INSERT INTO queue_consumer_health AS h (consumer_id, consumer_version, state, since, last_error, last_error_at)
     SELECT id, updated_at, $2, now(), $3::text, CASE WHEN $3::text IS NULL THEN NULL ELSE now() END
       FROM queue_consumers WHERE id = $1 AND updated_at < $4::timestamptz + interval '1 millisecond'
     ON CONFLICT (consumer_id) DO UPDATE SET
       since = CASE WHEN h.consumer_version = EXCLUDED.consumer_version AND h.state = EXCLUDED.state THEN h.since ELSE EXCLUDED.since END,
       last_error = CASE WHEN EXCLUDED.last_error IS NULL AND h.consumer_version = EXCLUDED.consumer_version THEN h.last_error ELSE EXCLUDED.last_error END,
       last_error_at = CASE WHEN EXCLUDED.last_error IS NULL AND h.consumer_version = EXCLUDED.consumer_version THEN h.last_error_at ELSE EXCLUDED.last_error_at END,
       state = EXCLUDED.state,
       consumer_version = EXCLUDED.consumer_version`,
    [consumer.id, report.state, error, consumer.updatedAt],
  );
}
