-- Durable external tool calls. A tool that talks to a remote party commits its
-- progress (a remote task id) on the call's row before it waits, so a worker
-- that takes the response over resumes from it instead of starting over.
-- `resumes_on_answer` marks a call parked for the user's answer that goes back
-- to the tool (in `answer`) instead of becoming the call's output.
ALTER TABLE tool_calls ADD COLUMN checkpoint jsonb;
ALTER TABLE tool_calls ADD COLUMN resumes_on_answer boolean NOT NULL DEFAULT false;
ALTER TABLE tool_calls ADD COLUMN answer text;
