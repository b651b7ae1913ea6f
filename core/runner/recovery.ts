// Taking over a response whose worker died: an output item that worker opened
// but never committed is closed as `incomplete` (with the text it streamed), so
// the retried step streams into a new item and no item ever holds text twice.
import type { Item, MessageItem } from '../../generated/schemas.js';
import { appendEvent, type JournalWriter } from '../journal/journal.js';
import { appendOutputItems } from '../responses/run-output.js';
import type { Db } from '../store/db.js';

interface OpenItem {
  outputIndex: number;
  item: Item;
  text: string;
}

export async function closeDanglingItems(db: Db, writer: JournalWriter): Promise<number> {
  const { rows } = await db.query<{ type: string; data: any }>(
    `SELECT type, data FROM response_events WHERE response_id = $1
       AND type IN ('item.added', 'item.done', 'text.delta')
     ORDER BY sequence`,
    [writer.responseId],
  );
  const open = new Map<string, OpenItem>();
  for (const { type, data } of rows) {
    if (type === 'item.added') open.set(data.item.id, { outputIndex: data.output_index, item: data.item, text: '' });
    else if (type === 'item.done') open.delete(data.item.id);
    else {
      const item = open.get(data.item_id);
      if (item) item.text += data.delta;
    }
  }
  if (open.size === 0) return 0;
  const closed = [...open.values()].sort((a, b) => a.outputIndex - b.outputIndex);
  await db.transaction(async (tx) => {
    const items: Item[] = [];
    for (const { outputIndex, item, text } of closed) {
      const incomplete: Item =
        item.type === 'message'
          ? ({ ...item, status: 'incomplete', content: [{ type: 'output_text', text, annotations: [] }] } satisfies MessageItem)
          : { ...item, status: 'incomplete' };
      items.push(incomplete);
      await appendEvent(tx, writer, { type: 'item.done', output_index: outputIndex, item: incomplete });
    }
    await appendOutputItems(tx, writer.responseId, items);
  });
  return closed.length;
}
