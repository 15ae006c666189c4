-- The audit says what is known of each operation (docs/operations.md#operator-api).
-- event_id: one per operation's row, made before the first attempt, so an
-- insert retried after its answer was lost finds its row instead of adding a
-- second. Rows from before have none (NULLs never collide in a unique index).
ALTER TABLE key_events ADD COLUMN event_id TEXT;
CREATE UNIQUE INDEX key_events_event_id ON key_events (event_id);
-- outcome: NULL when the operation happened; 'unknown' when it failed in a way
-- that may have come after it took effect (its answer was lost). Such a row is
-- kept, never deleted: the audit must not miss an operation that happened.
ALTER TABLE key_events ADD COLUMN outcome TEXT CHECK (outcome IS NULL OR outcome = 'unknown');
