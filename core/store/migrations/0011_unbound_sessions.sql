-- A session may start without an agent (OpenAI's Conversations API creates one
-- before any model is named); its first response binds it to that response's
-- agent, and from then on it is that agent's conversation like any other.
ALTER TABLE sessions ALTER COLUMN agent_id DROP NOT NULL;
