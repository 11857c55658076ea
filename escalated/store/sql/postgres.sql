-- The PostgreSQL store's named queries (see sqlite.sql for the format).
-- Parameters are psycopg's: %s and %(name)s.

-- part: delivery_columns
id, escalation_id, kind, target, event, status, body, secret, attempts_json, next_attempt_ms, created_ms

-- Pending deliveries in due order (claimed ones sort at their lease's end).
-- name: pending_deliveries
SELECT {delivery_columns} FROM deliveries WHERE status = %s ORDER BY next_attempt_ms LIMIT %s

-- Claim those of ids that are due and not claimed by a live lease.
-- name: claim_deliveries
UPDATE deliveries SET next_attempt_ms = %(lease_end_ms)s
WHERE id IN (
    SELECT id FROM deliveries
    WHERE id = ANY(%(ids)s) AND status = 'pending' AND next_attempt_ms <= %(now_ms)s
    FOR UPDATE SKIP LOCKED
)
RETURNING {delivery_columns}

-- Record an attempt only while the claim's token still holds (fencing).
-- name: record_attempt
UPDATE deliveries
SET attempts_json = (attempts_json::jsonb || jsonb_build_array(%(attempt)s::jsonb))::text,
    status = %(status)s, next_attempt_ms = %(next_attempt_ms)s
WHERE id = %(id)s AND status = 'pending' AND next_attempt_ms = %(token)s
