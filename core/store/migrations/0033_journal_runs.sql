-- The journal is written as runs: one row per append (core/journal/journal-rows.ts
-- encodes it), holding every event of that statement under the sequences
-- first_sequence..last_sequence, in a compact form that leaves out what the row's
-- response already says. A 20-word answer is three rows, not twenty-eight.
--
-- response_journal is the table; response_events is now a view of it with one
-- row per event, exactly as the table was (project_id, response_id, sequence,
-- type, data, created_at, position, tx_id), so whoever reads events with SQL
-- reads them as before. core/journal reads the table through
-- palai_journal_events, the one decoder, which the view uses too.
--
-- A row's data is either
-- - an object: one event (type, data) as before — every row written before this;
-- - an array of entries, type NULL, each entry one or more events in order:
--   {"type": …, …}   one event, whole;
--   {"m": o, …}      events of the message item at output index o: "a" its opening
--                    item.added and content.added, "d" text deltas, "z" "c" its
--                    text.done, content.done and item.done (completed) or "i" its
--                    item.done (incomplete), with "t" the item's text unless it is
--                    the deltas of the entry joined; "i" the item's id unless it is
--                    the one outputItemId gives;
--   {"s": status, …} a status event, its response rebuilt from the response row:
--                    with "r" all of it (the terminal event: the row does not change
--                    after it), else what stays the same for a response's life from
--                    the row, and the rest from the entry: "o" output, "u" usage,
--                    "b" usage by step, "e" error, "c" completed_at, "p" pending
--                    calls, "t" status_changed_at in seconds after created_at (each
--                    absent when empty, null or 0). So the agent's name and the
--                    previous_response_id are as the row has them now: a renamed
--                    agent shows its new name, a deleted previous response null.

ALTER TABLE response_events RENAME TO response_journal;
ALTER TABLE response_journal RENAME COLUMN sequence TO last_sequence;
ALTER TABLE response_journal ADD COLUMN first_sequence integer;
ALTER TABLE response_journal ALTER COLUMN type DROP NOT NULL;
ALTER TABLE response_journal ADD CONSTRAINT response_journal_run
  CHECK (first_sequence IS NULL OR first_sequence < last_sequence);
ALTER INDEX response_events_pkey RENAME TO response_journal_pkey;
ALTER INDEX response_events_feed RENAME TO response_journal_feed;
ALTER SEQUENCE response_events_position_seq RENAME TO response_journal_position_seq;
ALTER TRIGGER response_events_tx_id ON response_journal RENAME TO response_journal_tx_id;
ALTER FUNCTION response_events_tx_id() RENAME TO response_journal_tx_id;

-- As in 0008: a row's tx_id is at least its predecessor's, the row ending just before its first event.
CREATE OR REPLACE FUNCTION response_journal_tx_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.tx_id := GREATEST(
    pg_current_xact_id(),
    (SELECT tx_id FROM response_journal
      WHERE response_id = NEW.response_id AND last_sequence = COALESCE(NEW.first_sequence, NEW.last_sequence) - 1));
  RETURN NEW;
END
$$;

-- A timestamp as the unix seconds a ResponseState gives (core/json.ts unixSeconds).
CREATE FUNCTION palai_unix_seconds(at timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT floor(extract(epoch FROM at))::bigint
$$;

-- outputItemId (core/ids.ts): the response's id body and the output index in four base32 digits.
CREATE FUNCTION palai_output_item_id(prefix text, response_id text, output_index integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT prefix || '_' || substr(response_id, strpos(response_id, '_') + 1) || '_'
    || string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz', ((output_index >> shift) & 31) + 1, 1), '' ORDER BY shift DESC)
    FROM unnest(ARRAY[0, 5, 10, 15]) AS shift
$$;

-- runOptionsOf (core/responses/responses.ts): every run option, null (or no tools) where none was set.
CREATE FUNCTION palai_run_options(stored jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object(
      'temperature', COALESCE(stored->'temperature', 'null'),
      'max_output_tokens', COALESCE(stored->'max_output_tokens', 'null'),
      'user', COALESCE(stored->'user', 'null'),
      'top_p', COALESCE(stored->'top_p', 'null'),
      'parallel_tool_calls', COALESCE(stored->'parallel_tool_calls', 'null'),
      'tool_choice', COALESCE(stored->'tool_choice', 'null'),
      'tools', COALESCE(NULLIF(stored->'tools', 'null'), '[]'),
      'text_format', COALESCE(stored->'text_format', 'null'))
    || COALESCE((SELECT jsonb_object_agg(key, value) FROM jsonb_each(stored) WHERE key IN ('allowed_tools', 'limits', 'tool_entries')), '{}')
$$;

-- A status entry's response (responseState, core/responses/responses.ts), from the response row.
CREATE FUNCTION palai_journal_state(response_id text, entry jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
      'id', r.id,
      'status', entry->>'s',
      'agent', jsonb_build_object('id', r.agent_id, 'name', a.name, 'revision', rev.revision, 'revision_id', r.agent_revision_id),
      'session_id', r.session_id,
      'previous_response_id', r.previous_response_id,
      'instructions', r.instructions,
      'background', r.background,
      'metadata', r.metadata,
      'options', palai_run_options(r.options),
      'created_at', palai_unix_seconds(r.created_at))
    || CASE WHEN entry ? 'r' THEN jsonb_build_object(
      'output', r.output,
      'usage', r.usage,
      'usage_by_step', r.step_usage,
      'error', r.error,
      'pending_calls', '[]'::jsonb,
      'completed_at', palai_unix_seconds(r.completed_at),
      'status_changed_at', palai_unix_seconds(r.status_changed_at))
    ELSE jsonb_build_object(
      'output', COALESCE(entry->'o', '[]'),
      'usage', COALESCE(entry->'u', 'null'),
      'usage_by_step', COALESCE(entry->'b', '[]'),
      'error', COALESCE(entry->'e', 'null'),
      'pending_calls', COALESCE(entry->'p', '[]'),
      'completed_at', COALESCE(entry->'c', 'null'),
      'status_changed_at', palai_unix_seconds(r.created_at) + COALESCE((entry->>'t')::bigint, 0))
    END
    FROM responses r JOIN agents a ON a.id = r.agent_id JOIN agent_revisions rev ON rev.id = r.agent_revision_id
   WHERE r.id = response_id
$$;

-- The events of one entry, numbered from 0 within it.
CREATE FUNCTION palai_journal_entry_events(response_id text, entry jsonb) RETURNS TABLE (k integer, type text, data jsonb) LANGUAGE sql STABLE AS $$
  SELECT 0, entry->>'type', entry - 'type' WHERE entry ? 'type'
  UNION ALL
  SELECT 0, 'status', jsonb_build_object('status', entry->>'s', 'response', palai_journal_state(response_id, entry)) WHERE entry ? 's' AND NOT entry ? 'type'
  UNION ALL
  SELECT m.k, m.type, m.data
    FROM (SELECT (entry->>'m')::integer AS o,
                 COALESCE(entry->>'i', palai_output_item_id('msg', response_id, (entry->>'m')::integer)) AS id,
                 CASE WHEN entry ? 'a' THEN 2 ELSE 0 END AS opened,
                 COALESCE(jsonb_array_length(entry->'d'), 0) AS deltas,
                 COALESCE(entry->>'t', (SELECT string_agg(d.text, '' ORDER BY d.n) FROM jsonb_array_elements_text(entry->'d') WITH ORDINALITY AS d(text, n)), '') AS text
           WHERE entry ? 'm' AND NOT entry ? 'type') AS msg
    CROSS JOIN LATERAL (SELECT jsonb_build_object('item_id', msg.id, 'output_index', msg.o, 'content_index', 0) AS at,
                               jsonb_build_object('type', 'output_text', 'text', msg.text, 'annotations', '[]'::jsonb) AS part) AS w
    CROSS JOIN LATERAL (
      SELECT 0 AS k, 'item.added' AS type,
             jsonb_build_object('output_index', msg.o, 'item',
               jsonb_build_object('id', msg.id, 'type', 'message', 'role', 'assistant', 'status', 'in_progress', 'content', '[]'::jsonb)) AS data
       WHERE msg.opened = 2
      UNION ALL
      SELECT 1, 'content.added', w.at || jsonb_build_object('part', jsonb_build_object('type', 'output_text', 'text', '', 'annotations', '[]'::jsonb))
       WHERE msg.opened = 2
      UNION ALL
      SELECT msg.opened + d.n::integer - 1, 'text.delta', w.at || jsonb_build_object('delta', d.delta)
        FROM jsonb_array_elements(COALESCE(entry->'d', '[]')) WITH ORDINALITY AS d(delta, n)
      UNION ALL
      SELECT msg.opened + msg.deltas + c.k, c.type, c.data
        FROM (VALUES (0, 'text.done', w.at || jsonb_build_object('text', msg.text)),
                     (1, 'content.done', w.at || jsonb_build_object('part', w.part)),
                     (2, 'item.done', jsonb_build_object('output_index', msg.o, 'item',
                        jsonb_build_object('id', msg.id, 'type', 'message', 'role', 'assistant', 'status', 'completed', 'content', jsonb_build_array(w.part)))))
             AS c(k, type, data)
       WHERE entry->>'z' = 'c'
      UNION ALL
      SELECT msg.opened + msg.deltas, 'item.done', jsonb_build_object('output_index', msg.o, 'item',
               jsonb_build_object('id', msg.id, 'type', 'message', 'role', 'assistant', 'status', 'incomplete', 'content', jsonb_build_array(w.part)))
       WHERE entry->>'z' = 'i'
    ) AS m
$$;

-- Every event of a journal row, with its sequence.
CREATE FUNCTION palai_journal_events(j response_journal) RETURNS TABLE (sequence integer, type text, data jsonb) LANGUAGE sql STABLE AS $$
  SELECT j.last_sequence, j.type, j.data WHERE jsonb_typeof(j.data) = 'object'
  UNION ALL
  SELECT COALESCE(j.first_sequence, j.last_sequence) + (row_number() OVER (ORDER BY e.n, ev.k))::integer - 1, ev.type, ev.data
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(j.data) = 'array' THEN j.data ELSE '[]' END) WITH ORDINALITY AS e(entry, n)
    CROSS JOIN LATERAL palai_journal_entry_events(j.response_id, e.entry) AS ev
$$;

CREATE VIEW response_events AS
  SELECT j.project_id, j.response_id, e.sequence, e.type, e.data, j.created_at, j.position, j.tx_id
    FROM response_journal j CROSS JOIN LATERAL palai_journal_events(j) AS e;
