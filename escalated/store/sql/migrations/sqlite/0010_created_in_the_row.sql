-- An escalation's first history entry, 'created', is its own row's
-- created_by and created_ms: the history read adds it (escalation_with_history
-- in sql/sqlite.sql) instead of a create writing it to escalation_events and
-- its index, two of the b-trees every create wrote. The rows written before
-- say the same as the escalation's row, so they go.
DELETE FROM escalation_events WHERE event = 'created';
