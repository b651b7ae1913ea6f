// Output items that arrive whole (tool results, answers from callers) and later
// changes to a finished item. Each is journaled as it is written, under the
// writer's lease, so the journal replays every state an item went through.
import type { Item } from '../../generated/schemas.js';
import { appendEvent, type JournalWriter } from '../journal/journal.js';
import type { Queryable } from '../store/db.js';
import { assertLease } from './lease.js';

/** Appends finished items to the output and journals each as added + done. */
export async function appendOutputItems(tx: Queryable, writer: JournalWriter, items: Item[]): Promise<void> {
  if (items.length === 0) return;
  await assertLease(tx, writer);
  const { rows } = await tx.query<{ length: number }>(
    `UPDATE responses SET output = output || $2::jsonb WHERE id = $1 RETURNING jsonb_array_length(output) AS length`,
    [writer.responseId, JSON.stringify(items)],
  );
  let index = rows[0].length - items.length;
  for (const item of items) {
    const outputIndex = index++;
    await appendEvent(tx, writer, { type: 'item.added', output_index: outputIndex, item: { ...item, status: 'in_progress' } as Item });
    await appendEvent(tx, writer, { type: 'item.done', output_index: outputIndex, item });
  }
}
