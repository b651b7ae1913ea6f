-- A project secret's fingerprint (core/secrets/project-secrets.ts), taken when
-- it is stored: the SHA-256 and the length of its value, which a node command's
-- plan binds (docs/security.md#secrets-as-ephemeral-input), so preparing a plan
-- never opens the value; it is opened only to be sent. Secrets stored before
-- have none, and are opened once at preparation as before.
ALTER TABLE secrets ADD COLUMN value_digest text, ADD COLUMN value_length integer;

-- The Slack threads a session is the conversation of, found by the session:
-- an objective on a thread's session announces its notifications there.
CREATE INDEX slack_threads_session ON slack_threads (session_id);

-- A wake's call that a filesystem grant on part of a file profile admitted:
-- the parts (paths relative to the profile) its plan confines the node to.
ALTER TABLE tool_calls ADD COLUMN confined_to jsonb;
