-- Deleting a response detaches what points at it: the session items it added
-- and the responses that continued from it. These indexes keep that a lookup.
CREATE INDEX session_items_response ON session_items (response_id) WHERE response_id IS NOT NULL;
CREATE INDEX responses_previous ON responses (previous_response_id) WHERE previous_response_id IS NOT NULL;
