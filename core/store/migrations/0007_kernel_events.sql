-- The journal holds kernel events (protocols/kernel-events.schema.json) instead
-- of OpenAI stream events: every surface projects them into its own vocabulary.
-- Existing journals are rewritten in place; sequences do not change, so a client
-- resuming a stream after the upgrade resumes where it was.

UPDATE response_events SET
  data = jsonb_build_object(
    'status', data->'response'->>'status',
    'response', ((data->'response') - 'object' - 'model' - 'output_text' - 'incomplete_details' - 'required_action'
                 - 'tools' - 'parallel_tool_calls' - 'tool_choice')
                || jsonb_build_object('pending_calls', COALESCE(data->'response'->'required_action'->'calls', '[]'::jsonb))),
  type = 'status'
WHERE type IN ('response.created', 'response.queued', 'response.in_progress', 'response.waiting_for_approval',
               'response.waiting_for_tool', 'response.waiting_for_input', 'response.completed', 'response.failed',
               'response.cancelled', 'response.incomplete');

UPDATE response_events SET type = CASE type
    WHEN 'response.output_item.added' THEN 'item.added'
    WHEN 'response.output_item.done' THEN 'item.done'
    WHEN 'response.content_part.added' THEN 'content.added'
    WHEN 'response.content_part.done' THEN 'content.done'
    WHEN 'response.output_text.delta' THEN 'text.delta'
    WHEN 'response.output_text.done' THEN 'text.done'
  END,
  data = data - 'logprobs'
WHERE type IN ('response.output_item.added', 'response.output_item.done', 'response.content_part.added',
               'response.content_part.done', 'response.output_text.delta', 'response.output_text.done');
