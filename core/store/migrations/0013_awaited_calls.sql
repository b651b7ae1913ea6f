-- Finding the response that waits for a client function's output by the call's
-- id alone: a Chat Completions client sends back only the tool_call_id.
CREATE INDEX tool_calls_awaiting_output ON tool_calls (project_id, call_id) WHERE status = 'awaiting_output';
