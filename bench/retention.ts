// What retention gives back: the bytes a finished response holds in the store
// (its row, its journal, their indexes) before and after compaction, for a
// one-step response whose fake model answers 20 words, word by word. Measured
// as table and index growth (pg_total_relation_size of every table, after a
// VACUUM FULL so freed space is counted as freed) over N responses, on each
// store. Prints figures; asserts nothing.
import { compactFinished } from '../core/responses/retention.js';
import type { Db } from '../core/store/db.js';
import { record } from './figures.js';
import { onEachStore, withTwentyWordAgent } from './stores.js';

const RESPONSES = Number(process.env.BENCH_RETENTION_RESPONSES ?? 300);

/** Every table's size with its indexes and TOAST, once dead rows are gone. */
async function storeBytes(db: Db): Promise<number> {
  await db.exec('VACUUM FULL');
  const { rows } = await db.query<{ bytes: string }>(
    "SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0)::text AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = current_schema()",
  );
  return Number(rows[0].bytes);
}

export async function benchRetention(): Promise<void> {
  await onEachStore((store, db) =>
    withTwentyWordAgent(db, 'retention', async (projectId, respond) => {
      const empty = await storeBytes(db);
      for (let i = 0; i < RESPONSES; i++) await respond();
      const full = await storeBytes(db);
      for (;;) if ((await compactFinished(db, 0, 500, Date.now() + 60_000)).responses === 0) break;
      const compacted = await storeBytes(db);
      const { rows } = await db.query<{ n: number }>('SELECT count(*)::integer AS n FROM response_events WHERE project_id = $1', [projectId]);
      record({
        name: `retention (${store}): bytes per finished 20-word response`,
        value: (full - empty) / RESPONSES,
        unit: 'B',
        note: `${((compacted - empty) / RESPONSES).toFixed(0)} B after compaction (its row and its terminal event; ${rows[0].n} events left for ${RESPONSES + 1} responses), table and index growth over ${RESPONSES} responses after VACUUM FULL`,
      });
    }),
  );
}
