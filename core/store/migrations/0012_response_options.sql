-- What a request asked of this one run beyond the agent's spec (temperature,
-- max_output_tokens, the end user's id); the agent's own settings apply where
-- a value is absent.
ALTER TABLE responses ADD COLUMN options jsonb NOT NULL DEFAULT '{}';
