// The conversation a model call sees: a session's earlier items, or else the
// chain of previous responses, then this response's input and committed output,
// with any message the kernel added (an output repair request) in its place.
import type { Item } from '../../generated/schemas.js';
import { conversationItems, modelTurns } from '../responses/items.js';
import { findResponse, type ResponseRow } from '../responses/responses.js';
import { sessionHistory } from '../sessions/sessions.js';
import type { Queryable } from '../store/db.js';

const MAX_CHAIN = 1000;

export interface Conversation {
  items: Item[];
  /** Model turns in the conversation before this response's output: earlier items and its input (the fake script continues). */
  earlierModelTurns: number;
}

export async function conversationFor(db: Queryable, row: ResponseRow): Promise<Conversation> {
  const earlier: Item[] = [];
  if (row.session_id) {
    earlier.push(...(await sessionHistory(db, row.session_id, row.id)));
  } else {
    let previousId = row.previous_response_id;
    for (let depth = 0; previousId && depth < MAX_CHAIN; depth++) {
      const previous = await findResponse(db, row.project_id, previousId);
      if (!previous) break;
      earlier.unshift(...previous.input, ...previous.output);
      previousId = previous.previous_response_id;
    }
  }
  const output: Item[] = [];
  const inserted = row.kernel_items;
  row.output.forEach((item, index) => {
    for (const k of inserted) if (k.after === index) output.push(k.item);
    output.push(item);
  });
  for (const k of inserted) if (k.after >= row.output.length) output.push(k.item);
  const before = conversationItems([...earlier, ...row.input]);
  return { items: [...before, ...conversationItems(output)], earlierModelTurns: modelTurns(before) };
}
