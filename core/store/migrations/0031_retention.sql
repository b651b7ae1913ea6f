-- Retention (core/responses/retention.ts): a finished response's journal is
-- compacted to its terminal event after PALAI_RETENTION_COMPACT_AFTER, and the
-- time it was is kept. The index holds only finished responses not compacted
-- yet, oldest first (ids sort by creation): a row leaves it once compacted.
ALTER TABLE responses ADD COLUMN compacted_at timestamptz;
CREATE INDEX responses_uncompacted ON responses (id)
  WHERE compacted_at IS NULL AND status IN ('completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded');
