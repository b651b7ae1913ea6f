-- When a response last changed status: the time of an A2A task's status, an MCP
-- task's lastUpdatedAt, and ListTasks' statusTimestampAfter. A trigger keeps it,
-- so every writer of `status` (admission, claims, the status writer) stays as is.
ALTER TABLE responses ADD COLUMN status_changed_at timestamptz;
UPDATE responses SET status_changed_at = COALESCE(completed_at, created_at);
ALTER TABLE responses ALTER COLUMN status_changed_at SET DEFAULT now();
ALTER TABLE responses ALTER COLUMN status_changed_at SET NOT NULL;

CREATE FUNCTION responses_status_changed_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IS DISTINCT FROM OLD.status THEN
    NEW.status_changed_at := now();
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER responses_status_changed_at BEFORE UPDATE OF status ON responses
  FOR EACH ROW EXECUTE FUNCTION responses_status_changed_at();
