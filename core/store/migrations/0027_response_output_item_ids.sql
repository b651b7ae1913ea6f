-- A response's output items by id: what an item_reference in a request's input
-- names (core/responses/item-references.ts). Only the ids are indexed, one GIN
-- entry per output item, not the items' content.
CREATE INDEX responses_output_item_ids ON responses USING gin (jsonb_path_query_array(output, '$[*].id') jsonb_path_ops);
