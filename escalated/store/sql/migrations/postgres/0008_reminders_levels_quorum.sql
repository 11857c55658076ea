-- Reviewer operations (CONTRACT §15): reminders, levels, quorum. A
-- policy's as one JSON object (NULL: none). An escalation keeps a copy
-- from its creation, the level it reached, the quorum votes so far, and
-- when the SLA clock next owes it a reminder or a level (nudge_ms,
-- indexed while open: what the clock rebuilds itself from).

ALTER TABLE policies ADD COLUMN review_json TEXT;
ALTER TABLE escalations ADD COLUMN review_json TEXT;
ALTER TABLE escalations ADD COLUMN level INTEGER NOT NULL DEFAULT 0;
ALTER TABLE escalations ADD COLUMN approvals_json TEXT NOT NULL DEFAULT '[]';
ALTER TABLE escalations ADD COLUMN remind_ms BIGINT;
ALTER TABLE escalations ADD COLUMN nudge_ms BIGINT;
CREATE INDEX escalations_nudge ON escalations(nudge_ms) WHERE nudge_ms IS NOT NULL AND status = 'open';
