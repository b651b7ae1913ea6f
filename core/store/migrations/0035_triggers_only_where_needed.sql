-- Two row triggers are called only where they can change something: each call
-- of a plpgsql trigger is a function call and, for the journal's, a query, on
-- every response's hot path.
--
-- response_journal_tx_id (0033) raises a row's tx_id to its predecessor's. A
-- row whose events start at sequence 0 has no predecessor, so it keeps the
-- column's default, pg_current_xact_id(), which is what the function gives it.
DROP TRIGGER response_journal_tx_id ON response_journal;
CREATE TRIGGER response_journal_tx_id BEFORE INSERT ON response_journal
  FOR EACH ROW WHEN (COALESCE(NEW.first_sequence, NEW.last_sequence) > 0)
  EXECUTE FUNCTION response_journal_tx_id();

-- responses_status_changed_at (0018) stamps a change of status. A writer that
-- sets status_changed_at itself in the same UPDATE (the end, which sets it to
-- now() beside completed_at) needs no stamp; any other writer of status is
-- stamped as before.
DROP TRIGGER responses_status_changed_at ON responses;
CREATE TRIGGER responses_status_changed_at BEFORE UPDATE OF status ON responses
  FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status AND NEW.status_changed_at IS NOT DISTINCT FROM OLD.status_changed_at)
  EXECUTE FUNCTION responses_status_changed_at();
