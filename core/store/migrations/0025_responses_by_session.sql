-- A session's responses by id: its latest one, which an empty input that
-- continues the conversation may answer (core/responses/answer-target.ts), and
-- the listing of a session's responses.
CREATE INDEX responses_session ON responses (session_id, id) WHERE session_id IS NOT NULL;
