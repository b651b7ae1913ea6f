-- The secret store: every stored credential (model keys now; MCP and remote-agent
-- headers, webhook secrets and bot tokens later) is one row here, sealed with
-- PALAI_SECRET_KEY, and the tables that use one keep only its id.

CREATE TABLE secrets (
  id          text PRIMARY KEY,
  project_id  text NOT NULL REFERENCES projects(id),
  purpose     text NOT NULL,
  ciphertext  text NOT NULL,
  last4       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE model_connections ADD COLUMN api_key_secret_id text;

-- Each stored connection key moves to a secret of its own. The ciphertext moves
-- as it is (same PALAI_SECRET_KEY, nothing to decrypt). Ids take newId's shape:
-- 'sec_', the connection's creation time in milliseconds as 10 Crockford base32
-- characters, then 16 random ones (5 bits of a fresh digest each).
UPDATE model_connections AS c
   SET api_key_secret_id = 'sec_' || (
     SELECT string_agg(
              substr('0123456789abcdefghjkmnpqrstvwxyz',
                     1 + CASE WHEN i < 10
                              THEN ((floor(extract(epoch FROM c.created_at) * 1000)::bigint >> (5 * (9 - i))) & 31)::int
                              ELSE get_byte(decode(md5(gen_random_uuid()::text || c.id || i::text), 'hex'), 0) & 31
                         END,
                     1),
              '' ORDER BY i)
       FROM generate_series(0, 25) AS i)
 WHERE c.api_key_encrypted IS NOT NULL;

INSERT INTO secrets (id, project_id, purpose, ciphertext, last4, created_at, updated_at)
SELECT api_key_secret_id, project_id, 'model-key', api_key_encrypted, api_key_last4, created_at, created_at
  FROM model_connections
 WHERE api_key_secret_id IS NOT NULL;

-- Added after the move: the ids above were chosen before their rows existed.
ALTER TABLE model_connections
  ADD CONSTRAINT model_connections_api_key_secret FOREIGN KEY (api_key_secret_id) REFERENCES secrets(id),
  DROP COLUMN api_key_encrypted;
