// OpenAI's item reference in a request's input (`{"type": "item_reference", "id": "msg_…"}`, `type` optional):
// an item Palai returned before, named by its id instead of sent again. Clients that resend a whole history
// send earlier turns this way (the AI SDK's Responses provider does for every stored item). Resolved here, at
// admission, to the stored item in the caller's project: an output item of a response (found through the
// responses_output_item_ids index) or an item of a session. The run gets a copy under a new id, as with
// every input item; an id the project does not have is a 400 naming the item.
import { PalaiError } from '../errors/palai-error.js';
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
    return asInput(stored);
  }) as T;
}

async function storedItems(tx: Queryable, projectId: string, ids: string[]): Promise<Map<string, Item>> {
  const { rows } = await tx.query<{ id: string; item: Item }>(
    `SELECT ref.id, found.item
       FROM unnest($2::text[]) AS ref(id)
       CROSS JOIN LATERAL (
         SELECT s.item FROM session_items s WHERE s.id = ref.id AND s.project_id = $1
         UNION ALL
         SELECT o.item FROM responses r CROSS JOIN LATERAL jsonb_array_elements(r.output) AS o(item)
          WHERE jsonb_path_query_array(r.output, '$[*].id') @> jsonb_build_array(ref.id) AND r.project_id = $1 AND o.item->>'id' = ref.id
         LIMIT 1
       ) AS found`,
    [projectId, ids],
  );
  return new Map(rows.map((row) => [row.id, row.item]));
}

/** A stored item as the input item that says the same (its own id, status and annotations left behind). */
function asInput(item: Item): InputItem {
  switch (item.type) {
    case 'message':
      return { type: 'message', role: item.role, content: item.content.map((part) => ({ type: part.type, text: part.text })) };
    case 'function_call':
      return { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments };
    case 'function_call_output':
      return { type: 'function_call_output', call_id: item.call_id, output: item.output };
  }
}
