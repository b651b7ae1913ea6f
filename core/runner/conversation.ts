// The conversation a model call sees: a session's earlier items, or else the
// chain of previous responses, then this response's input and committed output.
import type { Item } from '../../generated/schemas.js';
import { conversationItems } from '../responses/items.js';
import { findResponse, type ResponseRow } from '../responses/responses.js';
import { sessionHistory } from '../sessions/sessions.js';
import type { Queryable } from '../store/db.js';

const MAX_CHAIN = 1000;

export async function conversationFor(db: Queryable, row: ResponseRow): Promise<Item[]> {
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
  return conversationItems([...earlier, ...row.input, ...row.output]);
}
