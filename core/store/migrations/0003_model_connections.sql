-- Named, per-project model connections. A stored key is encrypted at rest
-- (AES-256-GCM with PALAI_SECRET_KEY); only its last four characters are kept in clear.

CREATE TABLE model_connections (
  id                 text PRIMARY KEY,
  project_id         text NOT NULL REFERENCES projects(id),
  name               text NOT NULL,
  provider           text NOT NULL,
  base_url           text,
  api_key_encrypted  text,
  api_key_last4      text,
  api_key_env        text,
  default_model      text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);

ALTER TABLE responses ADD COLUMN step_usage jsonb NOT NULL DEFAULT '[]';

-- Every model call, retries included (the fake model's script cursor); model_calls
-- counts only the committed steps (the max_steps limit).
ALTER TABLE responses ADD COLUMN model_attempts integer NOT NULL DEFAULT 0;
