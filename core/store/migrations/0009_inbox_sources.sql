-- The inbox: one table deduplicates every inbound surface, so a key is scoped by
-- where it came from (an A2A messageId and an Idempotency-Key with the same text
-- are different requests). Rows written before this were all HTTP keys.
ALTER TABLE idempotency_keys ADD COLUMN source text NOT NULL DEFAULT 'http';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (project_id, source, key);
