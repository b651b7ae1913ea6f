// OpenAI's item reference in a request's input (`{"type": "item_reference", "id": "msg_…"}`, `type` optional):
// an item Palai returned before, named by its id instead of sent again. Clients that resend a whole history
// send earlier turns this way (the AI SDK's Responses provider does for every stored item). Resolved here, at
// admission, to the stored item in the caller's project: an output item of a response (its id names the
// response: ids.ts outputItemId, so no index over outputs is needed) or an item of a session. The run gets a copy under a new id, as with
// every input item; an id the project does not have is a 400 naming the item.
import { PalaiError } from '../errors/palai-error.js';
import { responseOfOutputItem } from '../ids.js';
import type { Queryable } from '../store/db.js';
import type { InputItem, InputItemReference, Item, ResponseInputItem } from '../../generated/schemas.js';

/** OpenAI's reference: `type` item_reference, or no type and no role (the schema admits only `id` then). */
export const isItemReference = (item: ResponseInputItem): item is InputItemReference =>
  item.type === 'item_reference' || (item.type === undefined && !('role' in item));

/** The input with every item reference replaced by the item it names, as an input item. */
export async function resolveItemReferences<T extends ResponseInputItem[] | string>(tx: Queryable, projectId: string, input: T): Promise<T> {
  if (typeof input === 'string' || !input.some(isItemReference)) return input;
  const ids = [...new Set(input.filter(isItemReference).map((item) => item.id))];
  const found = await storedItems(tx, projectId, ids);
  return input.map((item, index) => {
    if (!isItemReference(item)) return item;
    const stored = found.get(item.id);
    if (!stored) {
      throw new PalaiError('validation-failed', `Item ${JSON.stringify(item.id)} is not an item of a response or session of this project.`, {
        errors: [{ pointer: `/input/${index}/id`, detail: 'names no stored item' }],
      });
    }
    return asInput(stored.item, stored.output);
  }) as T;
}

/** A stored item, and for a call Palai ran (shown as one mcp_call), the output item beside it. */
interface Stored {
  item: Item;
  output: Item | null;
}

async function storedItems(tx: Queryable, projectId: string, ids: string[]): Promise<Map<string, Stored>> {
  const { rows } = await tx.query<{ id: string } & Stored>(
    `SELECT ref.id, found.item, found.output
       FROM unnest($2::text[], $3::text[]) AS ref(id, response_id)
       CROSS JOIN LATERAL (
         SELECT s.item,
                (SELECT o.item FROM session_items o WHERE o.session_id = s.session_id AND s.item->>'server' = 'true'
                    AND o.item->>'type' = 'function_call_output' AND o.item->>'call_id' = s.item->>'call_id' LIMIT 1) AS output
           FROM session_items s WHERE s.id = ref.id AND s.project_id = $1
         UNION ALL
         SELECT o.item,
                (SELECT x FROM jsonb_array_elements(r.output) AS x WHERE o.item->>'server' = 'true'
                    AND x->>'type' = 'function_call_output' AND x->>'call_id' = o.item->>'call_id' LIMIT 1) AS output
           FROM responses r CROSS JOIN LATERAL jsonb_array_elements(r.output) AS o(item)
          WHERE r.id = ref.response_id AND r.project_id = $1 AND o.item->>'id' = ref.id
         LIMIT 1
       ) AS found`,
    [projectId, ids, ids.map(responseOfOutputItem)],
  );
  return new Map(rows.map((row) => [row.id, { item: row.item, output: row.output }]));
}

/**
 * A stored item as the input item that says the same (its own id, status and annotations left behind). A call
 * Palai ran is referenced by the id of its mcp_call, which stands for the call and its output: both come.
 */
function asInput(item: Item, output: Item | null): InputItem {
  switch (item.type) {
    case 'message':
      return { type: 'message', role: item.role, content: item.content.map((part) => ({ type: part.type, text: part.text })) };
    case 'function_call':
      if (item.server) {
        const text = output?.type === 'function_call_output' ? output.output : null;
        return { type: 'mcp_call', id: item.call_id, server_label: 'palai', name: item.name, arguments: item.arguments, output: text };
      }
      return { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments };
    case 'function_call_output':
      return { type: 'function_call_output', call_id: item.call_id, output: item.output };
  }
}
