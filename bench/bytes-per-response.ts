// What one response writes to the store, as written (before any retention): a
// one-step response whose fake model answers 20 words, word by word, N times on
// each store. Bytes are the growth of each table with its TOAST and indexes
// (pg_total_relation_size, after a VACUUM FULL so pages are packed alike before
// and after), per response, with the journal's rows and events per response.
// Issue 31's goal: ≤ 3 KB on PostgreSQL. Prints figures; asserts nothing.
import type { Db } from '../core/store/db.js';
import { record } from './figures.js';
import { onEachStore, withTwentyWordAgent } from './stores.js';

const RESPONSES = Number(process.env.BENCH_BYTES_RESPONSES ?? 300);

interface TableBytes {
  heap: number;
  toast: number;
  indexes: number;
}

async function tableBytes(db: Db): Promise<Map<string, TableBytes>> {
  await db.exec('VACUUM FULL');
  await db.exec('ANALYZE');
  const { rows } = await db.query<{ name: string; heap: string; total: string; indexes: string }>(
    `SELECT c.relname AS name, pg_relation_size(c.oid)::text AS heap, pg_total_relation_size(c.oid)::text AS total, pg_indexes_size(c.oid)::text AS indexes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = current_schema()`,
  );
  return new Map(rows.map((r) => [r.name, { heap: Number(r.heap), indexes: Number(r.indexes), toast: Number(r.total) - Number(r.heap) - Number(r.indexes) }]));
}

export async function benchBytesPerResponse(): Promise<void> {
  await onEachStore((store, db) =>
    withTwentyWordAgent(db, 'bytes', async (projectId, respond) => {
      const before = await tableBytes(db);
      for (let i = 0; i < RESPONSES; i++) await respond();
      const after = await tableBytes(db);
      const perResponse = (name: string, part: keyof TableBytes) => ((after.get(name)?.[part] ?? 0) - (before.get(name)?.[part] ?? 0)) / RESPONSES;
      const tableTotal = (name: string) => perResponse(name, 'heap') + perResponse(name, 'toast') + perResponse(name, 'indexes');
      const total = [...after.keys()].reduce((sum, name) => sum + tableTotal(name), 0);
      const { rows } = await db.query<{ rows: number; events: number }>(
        `SELECT count(*)::integer AS rows, sum(last_sequence - COALESCE(first_sequence, last_sequence) + 1)::integer AS events
           FROM response_journal WHERE project_id = $1`,
        [projectId],
      );
      const describe = (name: string) =>
        `${name} ${tableTotal(name).toFixed(0)} B (rows ${perResponse(name, 'heap').toFixed(0)}, indexes ${perResponse(name, 'indexes').toFixed(0)}, TOAST ${perResponse(name, 'toast').toFixed(0)})`;
      record({
        name: `bytes written per 20-word response, as written (${store})`,
        value: total,
        unit: 'B',
        goal: { value: 3000, better: 'lower' },
        note: `${describe('responses')}, ${describe('response_journal')}; the journal holds ${(rows[0].rows / (RESPONSES + 1)).toFixed(1)} rows for ${(rows[0].events / (RESPONSES + 1)).toFixed(1)} events per response; growth over ${RESPONSES} responses after VACUUM FULL`,
      });
    }),
  );
}
